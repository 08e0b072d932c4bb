"""Durable execution, part 2: get_state / history, update_state, fork, replay, failures,
durability and the "checkpoints" stream mode; plus stepgraph's resume/interrupt errors.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
import time
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Command, interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    """A fresh checkpointer of each kind."""
    yield from open_saver(request.param, tmp_path)


def history(driver, app, config):
    if driver.is_async:

        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def update_state(driver, app, config, values, as_node=None):
    if driver.is_async:
        return asyncio.run(app.aupdate_state(config, values, as_node=as_node))
    return app.update_state(config, values, as_node=as_node)


class S(TypedDict):
    items: Annotated[list, operator.add]


def _chain(saver, *names, **compile_kw):
    g = StateGraph(S)
    prev = START
    for n in names:
        g.add_node(n, lambda s, n=n: {"items": [n]})
        g.add_edge(prev, n)
        prev = n
    g.add_edge(prev, END)
    return g.compile(checkpointer=saver, **compile_kw)


def _meta(st):
    return (st.metadata["source"], st.metadata["step"])


def test_get_state_after_run(driver, saver):
    app = _chain(saver, "a", "b")
    c = cfg()
    driver.invoke(app, {"items": ["x"]}, c)
    st = get_state(driver, app, c)
    assert st.values == {"items": ["x", "a", "b"]}
    assert st.next == () and st.tasks == () and st.interrupts == ()
    assert _meta(st) == ("loop", 2)
    assert st.config["configurable"]["thread_id"] == c["configurable"]["thread_id"]
    assert st.config["configurable"]["checkpoint_id"]
    assert st.parent_config["configurable"]["checkpoint_id"]
    assert st.created_at


def test_get_state_while_paused(driver, saver):
    app = _chain(saver, "a", "b", interrupt_before=["b"])
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    st = get_state(driver, app, c)
    assert st.values == {"items": ["a"]}
    assert st.next == ("b",)
    assert _meta(st) == ("loop", 1)
    [task] = st.tasks
    assert (task.name, task.error, task.interrupts, task.result) == ("b", None, (), None)


def test_get_state_on_unknown_thread(driver, saver):
    app = _chain(saver, "a")
    st = get_state(driver, app, cfg())
    assert st.values == {} and st.next == () and st.metadata is None and st.tasks == ()


def test_history_order_and_sources(driver, saver):
    app = _chain(saver, "a", "b")
    c = cfg()
    driver.invoke(app, {"items": ["x"]}, c)
    hist = history(driver, app, c)
    assert [_meta(s) for s in hist] == [("loop", 2), ("loop", 1), ("loop", 0), ("input", -1)]
    assert [s.next for s in hist] == [(), ("b",), ("a",), ("__start__",)]
    assert [s.values for s in hist] == [
        {"items": ["x", "a", "b"]},
        {"items": ["x", "a"]},
        {"items": ["x"]},
        {"items": []},
    ]
    ids = [s.config["configurable"]["checkpoint_id"] for s in hist]
    parents = [s.parent_config and s.parent_config["configurable"]["checkpoint_id"] for s in hist]
    assert parents == ids[1:] + [None]


def test_update_state_as_node_applies_reducer(driver, saver):
    app = _chain(saver, "a", "b", "c", interrupt_before=["b"])
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    new = update_state(driver, app, c, {"items": ["u"]}, as_node="b")
    assert new["configurable"]["checkpoint_id"]
    st = get_state(driver, app, c)
    assert st.values == {"items": ["a", "u"]}
    assert st.next == ("c",)
    assert _meta(st) == ("update", 2)
    assert driver.invoke(app, None, c) == {"items": ["a", "u", "c"]}


def test_update_state_without_as_node_uses_last_writer(driver, saver):
    app = _chain(saver, "a", "b", interrupt_before=["b"])
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    update_state(driver, app, c, {"items": ["u"]})
    st = get_state(driver, app, c)
    assert st.values == {"items": ["a", "u"]}
    assert st.next == ("b",)
    assert driver.invoke(app, None, c) == {"items": ["a", "u", "b"]}


def test_update_state_on_fresh_thread_acts_as_input(driver, saver):
    app = _chain(saver, "a")
    c = cfg()
    update_state(driver, app, c, {"items": ["seed"]})
    st = get_state(driver, app, c)
    assert st.values == {"items": ["seed"]}
    assert st.next == ("a",)
    assert _meta(st) == ("update", 0)
    assert [_meta(s) for s in history(driver, app, c)] == [("update", 0)]
    assert driver.invoke(app, None, c) == {"items": ["seed", "a"]}


def test_update_state_on_fresh_thread_as_start(driver, saver):
    app = _chain(saver, "a")
    c2 = cfg()
    update_state(driver, app, c2, {"items": ["seed"]}, as_node="__start__")
    assert get_state(driver, app, c2).next == ("a",)
    assert driver.invoke(app, None, c2) == {"items": ["seed", "a"]}


def test_fork_from_past_checkpoint(driver, saver):
    app = _chain(saver, "a", "b")
    c = cfg()
    driver.invoke(app, {"items": ["x"]}, c)
    hist = history(driver, app, c)
    after_a = next(s for s in hist if s.next == ("b",))
    fork = update_state(driver, app, after_a.config, {"items": ["f"]}, as_node="a")
    assert fork["configurable"]["checkpoint_id"] != after_a.config["configurable"]["checkpoint_id"]
    assert driver.invoke(app, None, fork) == {"items": ["x", "a", "f", "b"]}
    assert get_state(driver, app, c).values == {"items": ["x", "a", "f", "b"]}
    new_hist = history(driver, app, c)
    old_ids = {s.config["configurable"]["checkpoint_id"] for s in hist}
    assert old_ids <= {s.config["configurable"]["checkpoint_id"] for s in new_hist}
    past = get_state(driver, app, hist[0].config)
    assert past.values == {"items": ["x", "a", "b"]}


def test_fork_history_sources(driver, saver):
    app = _chain(saver, "a", "b")
    c = cfg()
    driver.invoke(app, {"items": ["x"]}, c)
    after_a = next(s for s in history(driver, app, c) if s.next == ("b",))
    fork = update_state(driver, app, after_a.config, {"items": ["f"]}, as_node="a")
    driver.invoke(app, None, fork)
    assert [(_meta(s), s.next) for s in history(driver, app, c)] == [
        (("loop", 3), ()),
        (("update", 2), ("b",)),
        (("loop", 2), ()),
        (("loop", 1), ("b",)),
        (("loop", 0), ("a",)),
        (("input", -1), ("__start__",)),
    ]


def test_replay_reexecutes_pending_tasks(driver, saver):
    calls = []

    def mk(n):
        def node(s):
            calls.append(n)
            return {"items": [n]}

        return node

    g = StateGraph(S)
    for n in "ab":
        g.add_node(n, mk(n))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"items": ["x"]}, c)
    before_b = next(s for s in history(driver, app, c) if s.next == ("b",))
    calls.clear()
    out = driver.invoke(app, None, before_b.config)
    assert out == {"items": ["x", "a", "b"]}
    assert calls == ["b"]
    assert len(history(driver, app, c)) == 6


def test_failed_parallel_task_rerun_alone(driver, saver):
    calls = {"ok": 0, "bad": 0}
    fail = [True]

    def ok(s):
        calls["ok"] += 1
        return {"items": ["ok"]}

    def bad(s):
        calls["bad"] += 1
        time.sleep(0.1)  # let "ok" finish first, so its writes are saved
        if fail[0]:
            raise ValueError("boom")
        return {"items": ["bad"]}

    g = StateGraph(S)
    g.add_node("ok", ok)
    g.add_node("bad", bad)
    g.add_edge(START, "ok")
    g.add_edge(START, "bad")
    app = g.compile(checkpointer=saver)
    c = cfg()
    with pytest.raises(ValueError, match="boom"):
        driver.invoke(app, {"items": []}, c)
    st = get_state(driver, app, c)
    assert st.next == ("bad",)
    tasks = {t.name: t for t in st.tasks}
    assert tasks["ok"].error is None and tasks["ok"].result == {"items": ["ok"]}
    assert "boom" in str(tasks["bad"].error)
    fail[0] = False
    out = driver.invoke(app, None, c)
    assert sorted(out["items"]) == ["bad", "ok"]
    assert calls == {"ok": 1, "bad": 2}


def test_durability_exit_single_checkpoint(driver, saver):
    app = _chain(saver, "a", "b", "c")
    c = cfg()
    out = driver.invoke(app, {"items": []}, c, durability="exit")
    assert out == {"items": ["a", "b", "c"]}
    hist = history(driver, app, c)
    assert len(hist) == 1
    assert hist[0].values == {"items": ["a", "b", "c"]}
    assert _meta(hist[0]) == ("loop", 3)


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_durability_per_step(driver, saver, durability):
    app = _chain(saver, "a", "b")
    c = cfg()
    driver.invoke(app, {"items": []}, c, durability=durability)
    assert len(history(driver, app, c)) == 4


def test_checkpoints_stream_mode(driver, saver):
    app = _chain(saver, "a", "b")
    c = cfg()
    chunks = driver.stream(app, {"items": ["x"]}, c, stream_mode="checkpoints")
    assert len(chunks) == 4
    assert [(p["metadata"]["source"], p["metadata"]["step"]) for p in chunks] == [
        ("input", -1),
        ("loop", 0),
        ("loop", 1),
        ("loop", 2),
    ]
    assert [p["values"] for p in chunks] == [
        {"items": []},
        {"items": ["x"]},
        {"items": ["x", "a"]},
        {"items": ["x", "a", "b"]},
    ]
    assert [p["next"] for p in chunks] == [["__start__"], ["a"], ["b"], []]
    hist = history(driver, app, c)
    assert [p["config"]["configurable"]["checkpoint_id"] for p in chunks] == [
        s.config["configurable"]["checkpoint_id"] for s in reversed(hist)
    ]


@pytest.mark.stepgraph_only
def test_resume_without_pending_interrupt_raises(driver, saver):
    app = _chain(saver, "a")
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    with pytest.raises(Exception) as info:
        driver.invoke(app, Command(resume="x"), c)
    assert str(info.value.code).startswith("SG") or info.value.code.name.startswith("SG")


@pytest.mark.stepgraph_only
def test_interrupt_without_checkpointer_raises(driver):
    g = StateGraph(S)
    g.add_node("n", lambda s: {"items": [interrupt("q")]})
    g.add_edge(START, "n")
    app = g.compile()
    with pytest.raises(Exception) as info:
        driver.invoke(app, {"items": []})
    code = info.value.code
    assert getattr(code, "value", code) == "SG320" or str(code) == "SG320"
