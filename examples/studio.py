"""``studio``: one graph that shows every view of the local studio (``/ui``, issue 16).

Served by ``stepgraph dev --config examples/studio.json`` (which also hosts the graphs of
``stepgraph.json``); the browser tests of ``tests/ui`` drive it::

    START -> chat -(Send x N)-> research (a subgraph: search -> write) -> review -> answer -> END

``chat``      streams ``Let me look into <topic>.`` token by token from an offline fake chat
              model, then calls the ``research`` tool (an AI message with a tool call) with the
              aspects to study.
``research``  one subgraph task per aspect (``Send`` fan-out): ``search`` then ``write`` append a
              note each to ``notes``.
``review``    ``interrupt()``s with the notes and a JSON schema for the answer (the studio renders
              a form from it): ``{"approved": bool, "comment": str}``.
``answer``    streams a summary token by token and sends custom stream events (progress).

No network and no model: the tokens are pushed with ``stepgraph.stream.messages.push_token``,
with a short pause between them so that a browser sees them arrive (longer with the run's
``configurable.token_pause_s``).
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any, TypedDict

from stepgraph.config import get_config, get_stream_writer
from stepgraph.graph import END, START, StateGraph, add_messages
from stepgraph.stream.messages import push_token
from stepgraph.types import Send, interrupt

ASPECTS = ("history", "design", "use")
TOKEN_PAUSE_S = 0.04
REVIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Review the notes",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve", "default": True},
        "comment": {"type": "string", "title": "Comment", "default": ""},
    },
    "required": ["approved"],
}


class StudioState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    topic: str
    notes: Annotated[list[str], operator.add]
    approved: bool
    comment: str


class ResearchState(TypedDict, total=False):
    topic: str
    aspect: str
    notes: Annotated[list[str], operator.add]


class ResearchOutput(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]


def _stream_text(text: str) -> str:
    """Push ``text`` word by word to ``stream_mode="messages"``; returns the message id.

    The pause between words is ``TOKEN_PAUSE_S``, or ``configurable.token_pause_s`` of the run.
    """
    pause = float(get_config().get("configurable", {}).get("token_pause_s", TOKEN_PAUSE_S))
    mid: str | None = None
    words = text.split(" ")
    for i, word in enumerate(words):
        mid = push_token(word if i == len(words) - 1 else word + " ", message_id=mid)
        time.sleep(pause)
    assert mid is not None
    return mid


def _content(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def chat(state: StudioState) -> dict[str, Any]:
    """Pick the topic from the last human message, answer in streamed tokens, call ``research``."""
    messages = state.get("messages") or []
    topic = state.get("topic") or (_content(messages[-1]).strip() if messages else "") or "stepgraph"
    text = f"Let me look into {topic}."
    mid = _stream_text(text)
    call = {"name": "research", "args": {"topic": topic, "aspects": list(ASPECTS)}, "id": "call_research",
            "type": "tool_call"}
    return {"topic": topic, "messages": [{"type": "ai", "content": text, "id": mid, "tool_calls": [call]}]}


def fan_out(state: StudioState) -> list[Send]:
    """One ``research`` task per aspect."""
    return [Send("research", {"topic": state["topic"], "aspect": a}) for a in ASPECTS]


def search(state: ResearchState) -> dict[str, Any]:
    return {"notes": [f"found: {state['aspect']} of {state['topic']}"]}


def write(state: ResearchState) -> dict[str, Any]:
    return {"notes": [f"wrote: {state['aspect']}"]}


research = (
    StateGraph(ResearchState, output_schema=ResearchOutput)
    .add_node("search", search)
    .add_node("write", write)
    .add_edge(START, "search")
    .add_edge("search", "write")
    .add_edge("write", END)
    .compile(name="research")
)


def review(state: StudioState) -> dict[str, Any]:
    """Ask a human to approve the notes (the interrupt value carries the answer's schema)."""
    answer = interrupt({"question": f"Approve {len(state.get('notes') or [])} notes on {state['topic']}?",
                        "notes": list(state.get("notes") or []), "schema": REVIEW_SCHEMA})
    approved = bool(answer.get("approved")) if isinstance(answer, dict) else bool(answer)
    comment = str(answer.get("comment") or "") if isinstance(answer, dict) else ""
    tool = {"type": "tool", "name": "research", "tool_call_id": "call_research",
            "content": f"{len(state.get('notes') or [])} notes, approved={approved}"}
    return {"approved": approved, "comment": comment, "messages": [tool]}


def answer(state: StudioState) -> dict[str, Any]:
    """Stream the summary; custom events report progress."""
    writer = get_stream_writer()
    writer({"progress": "summarizing", "notes": len(state.get("notes") or [])})
    if state.get("approved"):
        text = f"Summary of {state['topic']}: {len(state.get('notes') or [])} notes approved."
    else:
        text = f"The notes on {state['topic']} were not approved."
    mid = _stream_text(text)
    writer({"progress": "done"})
    return {"messages": [{"type": "ai", "content": text, "id": mid}]}


builder = (
    StateGraph(StudioState)
    .add_node("chat", chat)
    .add_node("research", research)
    .add_node("review", review)
    .add_node("answer", answer)
    .add_edge(START, "chat")
    .add_conditional_edges("chat", fan_out, ["research"])
    .add_edge("research", "review")
    .add_edge("review", "answer")
    .add_edge("answer", END)
)
studio = builder.compile(name="studio")
"""Compiled without a checkpointer: the server gives it its own."""

__all__ = ["REVIEW_SCHEMA", "builder", "research", "studio"]
