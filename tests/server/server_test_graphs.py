"""Extra graphs for the server tests (beside ``examples/server_graphs.py``)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


class StepState(TypedDict, total=False):
    """A log of the steps that ran, and how long ``slow_b`` sleeps."""

    delay: float
    steps: Annotated[list[str], operator.add]


def _fast_a(state: StepState) -> dict[str, Any]:
    return {"steps": ["a"]}


async def _slow_b(state: StepState) -> dict[str, Any]:
    await asyncio.sleep(float(state.get("delay", 30.0)))
    return {"steps": ["b"]}


two_step = (
    StateGraph(StepState)
    .add_node("a", _fast_a)
    .add_node("b", _slow_b)
    .add_edge(START, "a")
    .add_edge("a", "b")
    .add_edge("b", END)
)
"""A builder (not compiled): ``a`` at once, then ``b`` sleeps ``delay`` seconds."""


def make_graph(config: dict[str, Any]) -> Any:
    """A factory taking the run's config: the graph answers ``configurable.greeting``."""
    greeting = (config.get("configurable") or {}).get("greeting", "hello")

    def greet(state: StepState) -> dict[str, Any]:
        return {"steps": [greeting]}

    return StateGraph(StepState).add_node("greet", greet).add_edge(START, "greet").add_edge("greet", END)


def _talk(state: StepState) -> dict[str, Any]:
    from stepgraph.stream.messages import push_token

    mid = None
    for token in ("to", "ken"):
        mid = push_token(token, message_id=mid)
    return {"steps": ["talk"]}


talker = StateGraph(StepState).add_node("talk", _talk).add_edge(START, "talk").compile(name="talker")
chat_in_subgraph = StateGraph(StepState).add_node("sub", talker).add_edge(START, "sub")
"""A parent whose subgraph streams two tokens through ``push_token``."""

GRAPHS = {"two_step": two_step, "factory": make_graph, "chat_in_subgraph": chat_in_subgraph}
