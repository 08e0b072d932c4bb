"""Shapes of what state history reports: task results, interrupts of graphs whose state is
not a dict, and the parents of checkpoints stored with ``durability="exit"``; on every
driver x saver.

Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.checkpoint.base import BaseCheckpointSaver
from stepgraph.constants import TASKS
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Send, interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def history(driver, app, config):
    if driver.is_async:

        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def _list_graph(saver):
    def ask(state):
        return [f"ask:{interrupt('q')}"]

    g = StateGraph(Annotated[list, operator.add])
    g.add_node("a", lambda state: ["a"])
    g.add_node("ask", ask)
    g.add_edge(START, "a")
    g.add_edge("a", "ask")
    return g.compile(checkpointer=saver)


def test_interrupt_of_a_list_state_graph(driver, saver):
    app = _list_graph(saver)
    c = cfg()
    out = driver.invoke(app, ["x"], c)
    assert list(out) == ["__interrupt__"]
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert driver.invoke(app, Command(resume="r"), c) == ["x", "a", "ask:r"]


def test_task_result_of_a_single_channel_graph_is_the_written_value(driver, saver):
    app = _list_graph(saver)
    c = cfg()
    driver.invoke(app, ["x"], c)
    driver.invoke(app, Command(resume="r"), c)
    results = {t.name: t.result for s in history(driver, app, c) for t in s.tasks}
    assert results == {"__start__": ["x"], "a": ["a"], "ask": ["ask:r"]}


def test_task_result_lists_repeated_writes(driver, saver):
    class S(TypedDict):
        items: Annotated[list, operator.add]

    app = (
        StateGraph(S)
        .add_node("twice", lambda s: Command(update=[("items", ["a"]), ("items", ["b"])]))
        .add_edge(START, "twice")
        .compile(checkpointer=saver)
    )
    c = cfg()
    assert driver.invoke(app, {"items": []}, c) == {"items": ["a", "b"]}
    [twice] = [t for s in history(driver, app, c) for t in s.tasks if t.name == "twice"]
    assert twice.result == {"items": {"$writes": [["a"], ["b"]]}}


def test_exit_durability_checkpoint_follows_the_one_the_run_started_from(driver, saver):
    app = _list_graph(saver)
    c = cfg()
    driver.invoke(app, ["x"], c, durability="exit")
    driver.invoke(app, Command(resume="r"), c, durability="exit")
    last, first = history(driver, app, c)
    assert first.parent_config is None
    assert last.parent_config["configurable"]["checkpoint_id"] == first.config["configurable"]["checkpoint_id"]
    assert last.values == ["x", "a", "ask:r"]


class _V3Layout(BaseCheckpointSaver):
    """A saver whose reads give checkpoints in the v3 layout: queued ``Send``s in
    ``pending_sends`` instead of the ``__pregel_tasks`` channel."""

    def __init__(self, saver):
        self._saver = saver

    def __getattribute__(self, name):
        if name in ("_saver", "_old", "get_tuple", "aget_tuple", "__class__"):
            return object.__getattribute__(self, name)
        return getattr(object.__getattribute__(self, "_saver"), name)

    @staticmethod
    def _old(tup):
        if tup is not None and tup.checkpoint["channel_values"].get(TASKS):
            ckpt = tup.checkpoint
            ckpt["v"] = 3
            ckpt["pending_sends"] = ckpt["channel_values"].pop(TASKS)
            ckpt["channel_versions"].pop(TASKS)
            for seen in ckpt["versions_seen"].values():
                seen.pop(TASKS, None)
        return tup

    def get_tuple(self, config):
        return self._old(self._saver.get_tuple(config))

    async def aget_tuple(self, config):
        return self._old(await self._saver.aget_tuple(config))


def test_queued_sends_of_a_v3_checkpoint_run(driver, saver):
    class S(TypedDict):
        items: Annotated[list, operator.add]

    def ask(n):
        return {"items": [f"{n}:{interrupt('q')}"]}

    app = (
        StateGraph(S)
        .add_node("fan", lambda s: {"items": ["fan"]})
        .add_node("ask", ask)
        .add_edge(START, "fan")
        .add_conditional_edges("fan", lambda s: [Send("ask", 1), Send("ask", 2)])
        .compile(checkpointer=_V3Layout(saver), interrupt_before=["ask"])
    )
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    paused = app.get_state(c)
    assert paused.next == ("ask", "ask")
    out = driver.invoke(app, None, c)
    assert len(out["__interrupt__"]) == 2
