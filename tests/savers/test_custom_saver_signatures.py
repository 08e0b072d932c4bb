"""Custom savers subclassing ``InMemorySaver`` with LangGraph's method signatures."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph


def _graph(saver: Any) -> Any:
    g = StateGraph(Annotated[str, operator.add])
    g.add_node("a", lambda s: "a")
    g.add_node("b", lambda s: "b")
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    return g.compile(checkpointer=saver)


CFG = {"configurable": {"thread_id": "1"}}


def test_get_next_version_is_given_the_channel():
    """``get_next_version(current, channel)`` may declare ``channel`` without a default."""
    seen = []

    class Versioned(InMemorySaver):
        def get_next_version(self, current, channel):
            seen.append(channel)
            return super().get_next_version(current, channel)

    assert _graph(Versioned()).invoke("", CFG) == "ab"
    assert seen and set(seen) == {None}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_put_writes_without_task_path(mode: str):
    """A saver whose ``put_writes`` takes ``(config, writes, task_id)`` only still gets the
    task writes (stepgraph passes ``task_path`` only to savers that take it)."""
    calls = []

    class OldWrites(InMemorySaver):
        def put_writes(self, config, writes, task_id):
            calls.append(task_id)
            return super().put_writes(config, writes, task_id)

        async def aput_writes(self, config, writes, task_id):
            calls.append(task_id)
            return super().put_writes(config, writes, task_id)

    graph = _graph(OldWrites())
    if mode == "sync":
        assert graph.invoke("", CFG, durability="sync") == "ab"
    else:
        assert asyncio.run(graph.ainvoke("", CFG, durability="sync")) == "ab"
    assert len(calls) >= 2
