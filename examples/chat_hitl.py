"""``chat_hitl``: a chat graph whose tool call waits for a human review (issue 6's UI checks).

Hosted by ``stepgraph serve --config examples/stepgraph.json`` next to the conformance graphs
of ``server_graphs.py``; the JavaScript clients of ``tests/js`` (JS SDK, ``@ag-ui/langgraph``,
``useStream`` pages) drive it. It behaves like its LangGraph twin
``tests/js/graphs/chat_hitl_lg.py``, which LangGraph's own server hosts as the reference::

    START -> propose -> review -> answer -> END     over MessagesState

``propose``  appends an AI message calling the tool ``send_email`` (args ``{"to":
             "ann@example.com", "subject": "Hello", "body": "Hi Ann!"}``, tool-call id
             ``call_send_email``).
``review``   ``interrupt()``s with a tool-call review request in the shape of LangChain's
             HumanInTheLoopMiddleware (what agent-chat-ui renders)::

                 {"action_requests": [{"name": "send_email", "args": {...},
                                       "description": "Review the e-mail to ann@example.com"}],
                  "review_configs": [{"action_name": "send_email",
                                      "allowed_decisions": ["approve", "reject"]}]}

             and turns the resume value ``{"decisions": [{"type": "approve" | "reject", ...}]}``
             into a tool message whose content is the decision type (anything malformed
             counts as ``"reject"``).
``answer``   streams ``"decision: <type>"`` from an offline fake chat model.

No network: with langchain-core installed the model is its ``GenericFakeChatModel``;
without it, the same tokens are streamed through ``stepgraph.stream.messages.push_token``
and the messages are plain dicts.
"""

from __future__ import annotations

from typing import Any

from stepgraph.graph import END, START, MessagesState, StateGraph
from stepgraph.types import interrupt

try:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
except ImportError:  # pragma: no cover - exercised only without langchain-core
    GenericFakeChatModel = None  # type: ignore[assignment,misc]

EMAIL_ARGS = {"to": "ann@example.com", "subject": "Hello", "body": "Hi Ann!"}
TOOL_CALL_ID = "call_send_email"


def review_request() -> dict[str, Any]:
    """The interrupt value: one ``send_email`` action to approve or reject."""
    return {
        "action_requests": [
            {"name": "send_email", "args": dict(EMAIL_ARGS), "description": "Review the e-mail to ann@example.com"}
        ],
        "review_configs": [{"action_name": "send_email", "allowed_decisions": ["approve", "reject"]}],
    }


def inbox_request() -> list[dict[str, Any]]:
    """The same review in the older agent-inbox ``HumanInterrupt`` shape (``chat_hitl_inbox``).

    Released agent-chat-ui builds offer their Accept button only for this shape.
    """
    return [
        {
            "action_request": {"action": "send_email", "args": dict(EMAIL_ARGS)},
            "config": {"allow_accept": True, "allow_ignore": True, "allow_respond": False,
                       "allow_edit": False},
            "description": "Review the e-mail to ann@example.com",
        }
    ]


_INBOX_TYPES = {"accept": "approve", "ignore": "reject", "edit": "edit", "response": "reject"}


def decision_type(resume: Any) -> str:
    """``approve`` / ``reject`` / ``edit`` from a resume value; ``reject`` when malformed.

    Takes ``{"decisions": [{"type": ...}]}`` and the agent-inbox form ``[{"type": "accept"}]``.
    """
    try:
        if isinstance(resume, list):
            return _INBOX_TYPES.get(resume[0]["type"], "reject")
        kind = resume["decisions"][0]["type"]
    except (KeyError, IndexError, TypeError):
        return "reject"
    return kind if kind in ("approve", "reject", "edit") else "reject"


def _content(message: Any) -> Any:
    return message.get("content") if isinstance(message, dict) else getattr(message, "content", None)


def _is_tool(message: Any) -> bool:
    if isinstance(message, dict):
        return message.get("type") == "tool" or message.get("role") == "tool"
    return getattr(message, "type", None) == "tool"


def propose(state: MessagesState) -> dict[str, Any]:
    """Propose the ``send_email`` tool call."""
    call = {"name": "send_email", "args": dict(EMAIL_ARGS), "id": TOOL_CALL_ID, "type": "tool_call"}
    if GenericFakeChatModel is None:
        return {"messages": [{"type": "ai", "content": "", "tool_calls": [call]}]}
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


def review(state: MessagesState) -> dict[str, Any]:
    """Wait for the human's decision, then record it as the tool's result."""
    return _decided(decision_type(interrupt(review_request())))


def review_inbox(state: MessagesState) -> dict[str, Any]:
    """``review`` with the agent-inbox request shape."""
    return _decided(decision_type(interrupt(inbox_request())))


def _decided(kind: str) -> dict[str, Any]:
    if GenericFakeChatModel is None:
        return {"messages": [{"type": "tool", "content": kind, "name": "send_email", "tool_call_id": TOOL_CALL_ID}]}
    return {"messages": [ToolMessage(content=kind, name="send_email", tool_call_id=TOOL_CALL_ID)]}


def answer(state: MessagesState) -> dict[str, Any]:
    """Stream ``decision: <type>`` from a fake chat model."""
    last = state["messages"][-1]
    kind = _content(last) if _is_tool(last) else "reject"
    text = f"decision: {kind}"
    if GenericFakeChatModel is None:
        from stepgraph.stream.messages import push_token

        mid = None
        for token in ("decision:", " ", str(kind)):
            mid = push_token(token, message_id=mid)
        return {"messages": [{"type": "ai", "content": text, "id": mid}]}
    model = GenericFakeChatModel(messages=iter([AIMessage(content=text)]))
    return {"messages": [model.invoke(state["messages"])]}


def _build(name: str, review_node: Any) -> Any:
    return (
        StateGraph(MessagesState)
        .add_node("propose", propose)
        .add_node("review", review_node)
        .add_node("answer", answer)
        .add_edge(START, "propose")
        .add_edge("propose", "review")
        .add_edge("review", "answer")
        .add_edge("answer", END)
        .compile(name=name)
    )


chat_hitl = _build("chat_hitl", review)
chat_hitl_inbox = _build("chat_hitl_inbox", review_inbox)
"""The same graph with the older agent-inbox interrupt shape (for released agent-chat-ui)."""

__all__ = ["chat_hitl", "chat_hitl_inbox", "decision_type", "inbox_request", "review_request"]
