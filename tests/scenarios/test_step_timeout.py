"""``graph.step_timeout``: a step running longer fails with ``TimeoutError`` (counted from
the step's start, also while a stream consumer holds the stream); a slower async task is
cancelled, what finished before was streamed.

Each scenario runs on both drivers. Expected outputs were taken from LangGraph 1.2.22.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import StateGraph


class S(TypedDict):
    hello: str


def _graph(driver, seen):
    if driver.is_async:

        async def slow(s):
            try:
                await asyncio.sleep(1.5)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

        async def quick(s):
            await asyncio.sleep(0.2)
            return {"hello": "quick"}
    else:

        def slow(s):
            time.sleep(1.5)

        def quick(s):
            time.sleep(0.2)
            return {"hello": "quick"}

    g = StateGraph(S)
    g.add_node("slow", slow)
    g.add_node("quick", quick)
    g.set_conditional_entry_point(lambda _: ["slow", "quick"])
    app = g.compile()
    app.step_timeout = 0.6
    return app


@pytest.mark.parametrize("hold", [0.1, 0.6])
def test_step_timeout_while_the_consumer_holds_the_stream(driver, hold):
    seen: list[str] = []
    app = _graph(driver, seen)
    chunks = []
    if driver.is_async:

        async def consume():
            async for chunk in app.astream({"hello": "x"}):
                chunks.append(chunk)
                await asyncio.sleep(hold)

        with pytest.raises(TimeoutError):
            asyncio.run(consume())
        assert seen == ["cancelled"]
    else:
        with pytest.raises(TimeoutError):
            for chunk in app.stream({"hello": "x"}):
                chunks.append(chunk)
                time.sleep(hold)
    assert chunks == [{"quick": {"hello": "quick"}}]


def test_step_timeout_on_invoke(driver):
    app = _graph(driver, [])
    with pytest.raises(TimeoutError):
        driver.invoke(app, {"hello": "x"})
