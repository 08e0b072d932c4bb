"""The ``debug`` stream's checkpoint events match the saved history, subgraph tasks
included; a failed task's error reads back as the exception's repr.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    log: Annotated[list, operator.add]


def _history(driver, app, config):
    if driver.is_async:

        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def _node(name):
    return lambda s: {"log": [name]}


def _nested(saver):
    inner = StateGraph(S)
    inner.add_node("i1", _node("i1"))
    inner.add_edge(START, "i1")
    inner.add_edge("i1", END)
    mid = StateGraph(S)
    mid.add_node("m1", _node("m1"))
    mid.add_node("inner", inner.compile())
    mid.add_edge(START, "m1")
    mid.add_edge("m1", "inner")
    outer = StateGraph(S)
    outer.add_node("o1", _node("o1"))
    outer.add_node("mid", mid.compile())
    outer.add_edge(START, "o1")
    outer.add_edge("o1", "mid")
    return outer.compile(checkpointer=saver)


def _conf(config):
    return None if config is None else config["configurable"]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_debug_checkpoints_match_history(driver, saver, durability):
    app = _nested(saver)
    c = cfg()
    events = driver.stream(app, {"log": []}, c, stream_mode="debug", subgraphs=True,
                           durability=durability)
    by_ns: dict[tuple, list] = {}
    for ns, ev in events:
        if ev["type"] == "checkpoint":
            by_ns.setdefault(ns, []).append(ev["payload"])
    root = list(reversed(by_ns[()]))
    hist = _history(driver, app, c)
    if durability == "exit":
        root = root[:1]
    assert len(root) == len(hist)
    for ev, snap in zip(root, hist, strict=True):
        assert _conf(ev["config"]) == _conf(snap.config)
        assert _conf(ev["parent_config"]) == _conf(snap.parent_config)
        assert ev["next"] == list(snap.next)
        assert [(t["id"], t["state"]) for t in ev["tasks"]] == [(t.id, t.state) for t in snap.tasks]
    # the subgraph task points at its checkpoints' namespace
    mid_tasks = [t for ev in root for t in ev["tasks"] if t["name"] == "mid"]
    if durability != "exit":
        assert mid_tasks and mid_tasks[0]["state"] == {
            "configurable": {"thread_id": c["configurable"]["thread_id"],
                             "checkpoint_ns": f"mid:{mid_tasks[0]['id']}"}
        }
    # a nested subgraph's checkpoint events carry the map of its ancestors' checkpoints
    inner_ns = next(ns for ns in by_ns if len(ns) == 2)
    for ev in by_ns[inner_ns]:
        cmap = ev["config"]["configurable"]["checkpoint_map"]
        assert set(cmap) == {"", inner_ns[0], "|".join(inner_ns)}
    if durability == "exit":
        assert root[0]["parent_config"] is None


def test_failed_task_error_reads_back_as_repr(driver, saver):
    def bad(s):
        raise RuntimeError("simulated")

    g = StateGraph(S)
    g.add_node("bad", bad)
    g.add_edge(START, "bad")
    app = g.compile(checkpointer=saver)
    c = cfg()
    with pytest.raises(RuntimeError):
        driver.invoke(app, {"log": []}, c)
    st = get_state(driver, app, c)
    assert st.next == ("bad",)
    assert st.tasks[0].error == "RuntimeError('simulated')"
    failed = next(s for s in _history(driver, app, c) if s.tasks and s.tasks[0].error)
    assert "RuntimeError('simulated')" in failed.tasks[0].error
