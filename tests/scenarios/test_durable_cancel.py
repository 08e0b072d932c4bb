"""Cancelling an async run keeps every committed checkpoint and leaves the running node pending."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph


class S(TypedDict):
    log: Annotated[list[str], operator.add]


async def test_cancelled_run_leaves_the_running_node_next() -> None:
    """A run cancelled inside its second node resumes from that node."""
    calls: list[str] = []

    async def fast(state: S) -> dict:
        calls.append("a")
        return {"log": ["a"]}

    async def slow(state: S) -> dict:
        calls.append("b")
        await asyncio.sleep(30 if len(calls) < 3 else 0)
        return {"log": ["b"]}

    g = StateGraph(S)
    g.add_node("a", fast)
    g.add_node("b", slow)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "cancel"}}

    async def consume() -> None:
        async for _ in app.astream({"log": []}, config, stream_mode="values"):
            pass

    run = asyncio.ensure_future(consume())
    while calls != ["a", "b"]:
        await asyncio.sleep(0.01)
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    state = await app.aget_state(config)
    assert state.next == ("b",)
    assert state.values == {"log": ["a"]}
    assert await app.ainvoke(None, config) == {"log": ["a", "b"]}
