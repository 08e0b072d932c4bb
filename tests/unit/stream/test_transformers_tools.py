"""``ToolCallTransformer``: ``run.tool_calls`` from the ``tools`` stream mode, both drivers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from stepgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from stepgraph.prebuilt import ToolCallTransformer, ToolNode  # noqa: E402


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def broken(a: int) -> int:
    """Always fails."""
    raise ValueError("no")


def _graph() -> Any:
    node = ToolNode([add, broken], handle_tool_errors=True)
    return StateGraph(MessagesState).add_node("tools", node).add_edge(START, "tools").compile()


CALLS = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"},
                                  {"name": "broken", "args": {"a": 1}, "id": "c2"}])


def _summary(streams: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((s.tool_call_id, s.tool_name, s.completed, s.output, s.error is not None)
                  for s in streams)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_tool_calls_projection(driver: str) -> None:
    graph = _graph()
    if driver == "sync":
        run = graph.stream_events({"messages": [CALLS]}, version="v3",
                                  transformers=[ToolCallTransformer])
        streams = list(run.tool_calls)
    else:
        async def main() -> list[Any]:
            run = await graph.astream_events({"messages": [CALLS]}, version="v3",
                                             transformers=[ToolCallTransformer])
            return [s async for s in run.tool_calls]

        streams = asyncio.run(main())
    assert _summary(streams) == [("c1", "add", True, "3", False), ("c2", "broken", True, None, True)]
