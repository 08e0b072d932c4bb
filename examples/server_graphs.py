"""Graphs hosted by ``stepgraph serve`` for the LangGraph Server conformance check.

These are the graphs ``../shared/conformance/sdk_client_check.py`` expects (same ids, state
schemas and behaviour), written with stepgraph imports. ``stepgraph.json`` next to this file
registers them::

    stepgraph serve --config examples/stepgraph.json

All graphs are compiled without a checkpointer: the server supplies one. Nothing here calls
the network; ``chat`` uses langchain-core's offline ``GenericFakeChatModel`` when
langchain-core is installed, and a tiny built-in fake otherwise.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.config import get_stream_writer
from stepgraph.graph import END, START, MessagesState, StateGraph
from stepgraph.types import interrupt


class State(TypedDict, total=False):
    """A string that nodes append letters to, and the log of nodes that ran."""

    value: str
    steps: Annotated[list[str], operator.add]


# -- simple: START -> a -> b -> END ----------------------------------------------------------
def _a(state: State) -> dict[str, Any]:
    get_stream_writer()({"node": "a", "value": state.get("value", "")})
    return {"value": state.get("value", "") + "a", "steps": ["a"]}


def _b(state: State) -> dict[str, Any]:
    return {"value": state.get("value", "") + "b", "steps": ["b"]}


simple = (
    StateGraph(State)
    .add_node("a", _a)
    .add_node("b", _b)
    .add_edge(START, "a")
    .add_edge("a", "b")
    .add_edge("b", END)
    .compile(name="simple")
)


# -- nested: START -> prep -> child(subgraph: child_1 -> child_2) -> finish -> END ----------
class ChildState(TypedDict, total=False):
    """The subgraphs' state: only ``value``."""

    value: str


def _child_1(state: ChildState) -> dict[str, Any]:
    return {"value": state.get("value", "") + "1"}


def _child_2(state: ChildState) -> dict[str, Any]:
    return {"value": state.get("value", "") + "2"}


child = (
    StateGraph(ChildState)
    .add_node("child_1", _child_1)
    .add_node("child_2", _child_2)
    .add_edge(START, "child_1")
    .add_edge("child_1", "child_2")
    .add_edge("child_2", END)
    .compile(name="child")
)


def _prep(state: State) -> dict[str, Any]:
    return {"value": state.get("value", "") + "p", "steps": ["prep"]}


def _finish(state: State) -> dict[str, Any]:
    return {"value": state.get("value", "") + "f", "steps": ["finish"]}


nested = (
    StateGraph(State)
    .add_node("prep", _prep)
    .add_node("child", child)
    .add_node("finish", _finish)
    .add_edge(START, "prep")
    .add_edge("prep", "child")
    .add_edge("child", "finish")
    .add_edge("finish", END)
    .compile(name="nested")
)


# -- interrupt: START -> ask (interrupt) -> after -> END -------------------------------------
class InterruptState(TypedDict, total=False):
    """``simple``'s state plus the human's ``answer``."""

    value: str
    answer: str
    steps: Annotated[list[str], operator.add]


def _ask(state: InterruptState) -> dict[str, Any]:
    answer = interrupt({"question": "approve?", "value": state.get("value", "")})
    return {"answer": answer, "steps": ["ask"]}


def _after(state: InterruptState) -> dict[str, Any]:
    return {"value": state.get("value", "") + "|" + str(state.get("answer")), "steps": ["after"]}


interrupt_graph = (
    StateGraph(InterruptState)
    .add_node("ask", _ask)
    .add_node("after", _after)
    .add_edge(START, "ask")
    .add_edge("ask", "after")
    .add_edge("after", END)
    .compile(name="interrupt")
)


# -- nested_interrupt: START -> prep -> inner(subgraph: gate interrupts) -> END -------------
def _gate(state: ChildState) -> dict[str, Any]:
    answer = interrupt({"question": "inner?"})
    return {"value": state.get("value", "") + "[" + str(answer) + "]"}


inner = (
    StateGraph(ChildState)
    .add_node("gate", _gate)
    .add_edge(START, "gate")
    .add_edge("gate", END)
    .compile(name="inner")
)

nested_interrupt = (
    StateGraph(State)
    .add_node("prep", _prep)
    .add_node("inner", inner)
    .add_edge(START, "prep")
    .add_edge("prep", "inner")
    .add_edge("inner", END)
    .compile(name="nested_interrupt")
)


# -- slow: START -> nap (async sleep) -> END ------------------------------------------------
class SlowState(TypedDict, total=False):
    """``delay`` seconds to sleep, then ``simple``'s keys."""

    delay: float
    value: str
    steps: Annotated[list[str], operator.add]


async def _nap(state: SlowState) -> dict[str, Any]:
    await asyncio.sleep(float(state.get("delay", 1.0)))
    return {"value": state.get("value", "") + "z", "steps": ["nap"]}


slow = (
    StateGraph(SlowState)
    .add_node("nap", _nap)
    .add_edge(START, "nap")
    .add_edge("nap", END)
    .compile(name="slow")
)


# -- fail: START -> boom (raises) -> END ----------------------------------------------------
def _boom(state: State) -> dict[str, Any]:
    raise ValueError("boom: " + state.get("value", ""))


fail = (
    StateGraph(State)
    .add_node("boom", _boom)
    .add_edge(START, "boom")
    .add_edge("boom", END)
    .compile(name="fail")
)


# -- chat: START -> respond (a fake chat model streaming "hello from chat") -> END ----------
def _respond(state: MessagesState) -> dict[str, Any]:
    try:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage
    except ImportError:  # no langchain-core: stream the same tokens through stepgraph's hook
        from stepgraph.stream.messages import push_token

        mid = None
        for token in ("hello", " ", "from", " ", "chat"):
            mid = push_token(token, message_id=mid)
        return {"messages": [{"role": "assistant", "content": "hello from chat", "id": mid}]}
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello from chat")]))
    return {"messages": [model.invoke(state["messages"])]}


chat = (
    StateGraph(MessagesState)
    .add_node("respond", _respond)
    .add_edge(START, "respond")
    .add_edge("respond", END)
    .compile(name="chat")
)

GRAPHS = {
    "simple": simple,
    "nested": nested,
    "interrupt": interrupt_graph,
    "nested_interrupt": nested_interrupt,
    "slow": slow,
    "fail": fail,
    "chat": chat,
}

__all__ = ["GRAPHS", "chat", "fail", "interrupt_graph", "nested", "nested_interrupt", "simple", "slow"]
