"""Graphs of the integrations tests: a chat graph (``messages`` state), an adder, a header echo."""

from __future__ import annotations

from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.graph.message import add_messages


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def reply(state: Chat) -> dict[str, Any]:
    last = state["messages"][-1]
    return {"messages": [{"role": "assistant", "content": f"echo: {last.content}"}]}


chat = StateGraph(Chat).add_node("reply", reply).add_edge(START, "reply").compile()


class SumIn(TypedDict):
    a: int
    b: int


class Sum(SumIn):
    total: int


adder = (StateGraph(Sum, input_schema=SumIn).add_node("add", lambda s: {"total": s["a"] + s["b"]}).add_edge(START, "add")
         .compile())


class Seen(TypedDict, total=False):
    x: int
    seen: dict


def look(state: Seen, config: Any) -> dict[str, Any]:
    conf = config["configurable"]
    return {"seen": {k: conf.get(k) for k in ("x-user-id", "x-user-secret", "x-other")}}


headers = StateGraph(Seen).add_node("look", look).add_edge(START, "look").compile()
