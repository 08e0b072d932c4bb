"""A consumer that stops reading an async stream early (``aclosing``/``break``) or is
cancelled: the step's running async tasks are cancelled at once, what finished is saved;
``astream_events`` goes on running while its consumer holds an event, and a cancelled
consumer still lets the run's last save finish.

Each scenario runs on every saver (memory, sqlite, postgres); these are async-only APIs.
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
from contextlib import aclosing
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    value: Annotated[int, operator.add]


class Slow:
    """An async node (a callable object) that records whether it started and was cancelled."""

    def __init__(self) -> None:
        self.started = False
        self.cancelled = False

    async def __call__(self, state: S) -> dict:
        self.started = True
        try:
            await asyncio.sleep(1.5)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return {"value": 100}


async def _quick(state: S) -> dict:
    await asyncio.sleep(0.3)
    return {"value": 2}


def test_closing_the_stream_cancels_the_running_step(saver):
    after, beside = Slow(), Slow()
    g = StateGraph(S)
    g.add_node("quick", _quick)
    g.add_node("beside", beside)
    g.add_node("after", after)
    g.add_edge(START, "quick")
    g.add_edge(START, "beside")
    g.add_edge("quick", "after")
    app = g.compile(checkpointer=saver)
    c = cfg()

    async def run():
        async with aclosing(app.astream({"value": 1}, c)) as stream:
            async for chunk in stream:
                assert chunk == {"quick": {"value": 2}}
                break
        return await app.aget_state(c)

    state = asyncio.run(run())
    assert (beside.started, beside.cancelled, after.started) == (True, True, False)
    assert state.values == {"value": 3}
    assert state.next == ("beside",)
    assert (state.metadata["source"], state.metadata["step"]) == ("loop", 0)


def test_stream_events_run_on_while_the_consumer_holds_an_event(saver):
    after, last = Slow(), Slow()
    g = StateGraph(S)
    g.add_node("quick", _quick)
    g.add_node("after", after)
    g.add_node("last", last)
    g.add_edge(START, "quick")
    g.add_edge("quick", "after")
    g.add_edge("after", "last")
    app = g.compile(checkpointer=saver)
    c = cfg()

    async def run():
        async with aclosing(app.astream_events({"value": 1}, c, version="v2")) as events:
            async for event in events:
                if event["event"] == "on_chain_stream" and not event["parent_ids"]:
                    assert event["data"]["chunk"] == {"quick": {"value": 2}}
                    await asyncio.sleep(0.2)
                    break
        return await app.aget_state(c)

    state = asyncio.run(run())
    assert after.started and after.cancelled and not last.started
    assert state.values == {"value": 3}
    assert state.next == ("after",)
    assert (state.metadata["source"], state.metadata["step"]) == ("loop", 1)


def test_cancelled_events_consumer_waits_for_the_last_save(saver):
    logs: list[str] = []

    async def node(state: S) -> dict:
        logs.append("node.start")
        try:
            await asyncio.sleep(1)
        finally:
            logs.append("node.end")
        return {"value": 1}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=saver)
    c = cfg()

    async def run():
        events = app.astream_events({"value": 1}, c, version="v2", durability="exit",
                                   include_names=["LangGraph"])
        await events.__anext__()
        pending = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.3)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        return await app.aget_state(c)

    state = asyncio.run(run())
    assert logs == ["node.start", "node.end"]
    # the exit save happened before the cancellation returned: the input is kept
    assert state.values == {"value": 1}
    assert state.next == ("node",)
