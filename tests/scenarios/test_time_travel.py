"""Time travel with subgraphs: replaying and forking past checkpoints of a parent graph or
of a subgraph (the config ``get_state(subgraphs=True)`` gives), on every driver x saver.

Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def history(driver, app, config) -> list[Any]:
    if driver.is_async:

        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def state(driver, app, config, subgraphs=False):
    if driver.is_async:
        return asyncio.run(app.aget_state(config, subgraphs=subgraphs))
    return app.get_state(config, subgraphs=subgraphs)


def update(driver, app, config, values):
    if driver.is_async:
        return asyncio.run(app.aupdate_state(config, values))
    return app.update_state(config, values)


class S(TypedDict):
    value: Annotated[list[str], operator.add]


class P(TypedDict):
    results: Annotated[list[str], operator.add]


def _asker(called, name):
    def node(s):
        called.append(name)
        return {"value": [f"{name}:{interrupt(name + '?')}"]}

    return node


def _stateful_chain(seen, *names, checkpointer: Any = True):
    """A ``checkpointer=True`` subgraph of nodes appending their name, recording what each saw."""

    def mk(n):
        def node(s):
            seen.append((n, list(s["value"])))
            return {"value": [n]}

        return node

    g = StateGraph(S)
    prev = START
    for n in names:
        g.add_node(n, mk(n))
        g.add_edge(prev, n)
        prev = n
    return g.compile(checkpointer=checkpointer)


def _parent(saver, sub, *, before="p"):
    return (
        StateGraph(P)
        .add_node(before, lambda s: {"results": [before]})
        .add_node("sub", sub)
        .add_edge(START, before)
        .add_edge(before, "sub")
        .compile(checkpointer=saver)
    )


# -- replaying the parent: stateful subgraphs load their state as of that point ---------------


@pytest.mark.parametrize("how", ["replay", "fork"])
def test_stateful_subgraph_state_follows_parent_replay(driver, saver, how):
    seen: list[Any] = []
    app = _parent(saver, _stateful_chain(seen, "s"))
    c = cfg()
    driver.invoke(app, {"results": []}, c)
    driver.invoke(app, {"results": []}, c)
    assert seen == [("s", []), ("s", ["s"])]
    before_sub_2nd = next(s for s in history(driver, app, c) if s.next == ("sub",))
    target = before_sub_2nd.config
    if how == "fork":
        target = update(driver, app, target, {"results": ["f"]})
    seen.clear()
    driver.invoke(app, None, target)
    assert seen == [("s", ["s"])]  # as after the 1st run, not the 2nd
    seen.clear()
    driver.invoke(app, {"results": []}, c)  # the next run continues the replayed branch
    assert seen == [("s", ["s", "s"])]


def test_replay_of_first_run_sees_empty_subgraph(driver, saver):
    seen: list[Any] = []
    app = _parent(saver, _stateful_chain(seen, "s"))
    c = cfg()
    driver.invoke(app, {"results": []}, c)
    driver.invoke(app, {"results": []}, c)
    before_sub_1st = [s for s in history(driver, app, c) if s.next == ("sub",)][-1]
    seen.clear()
    driver.invoke(app, None, before_sub_1st.config)
    assert seen == [("s", [])]


def test_three_levels_load_state_as_of_replay(driver, saver):
    seen: list[Any] = []

    class Mid(TypedDict):
        trail: Annotated[list[str], operator.add]

    mid = (
        StateGraph(Mid)
        .add_node("mid", lambda s: seen.append(("mid", list(s["trail"]))) or {"trail": ["m"]})
        .add_node("inner_node", _stateful_chain(seen, "inner"))
        .add_edge(START, "mid")
        .add_edge("mid", "inner_node")
        .compile(checkpointer=True)
    )
    app = _parent(saver, mid)
    c = cfg()
    driver.invoke(app, {"results": []}, c)
    driver.invoke(app, {"results": []}, c)
    start_2nd = next(s for s in history(driver, app, c) if s.next == ("p",))
    seen.clear()
    driver.invoke(app, None, start_2nd.config)
    assert seen == [("mid", ["m"]), ("inner", ["inner"])]
    seen.clear()
    driver.invoke(app, {"results": []}, c)
    assert seen == [("mid", ["m", "m"]), ("inner", ["inner", "inner"])]


def test_parallel_subgraphs_each_load_their_own_state(driver, saver):
    seen: list[Any] = []
    app = (
        StateGraph(P)
        .add_node("p", lambda s: {"results": ["p"]})
        .add_node("a", _stateful_chain(seen, "a"))
        .add_node("b", _stateful_chain(seen, "b"))
        .add_edge(START, "p")
        .add_edge("p", "a")
        .add_edge("p", "b")
        .compile(checkpointer=saver)
    )
    c = cfg()
    driver.invoke(app, {"results": []}, c)
    driver.invoke(app, {"results": []}, c)
    start_2nd = next(s for s in history(driver, app, c) if s.next == ("p",))
    seen.clear()
    driver.invoke(app, None, start_2nd.config)
    assert sorted(seen) == [("a", ["a"]), ("b", ["b"])]


def test_subgraph_in_a_loop_loads_earlier_state_once(driver, saver):
    seen: list[Any] = []

    class L(TypedDict):
        n: int

    app = (
        StateGraph(L)
        .add_node("inc", lambda s: {"n": s["n"] + 1})
        .add_node("sub", _stateful_chain(seen, "s"))
        .add_edge(START, "inc")
        .add_edge("inc", "sub")
        .add_conditional_edges("sub", lambda s: "inc" if s["n"] < 2 else "__end__", ["inc", "__end__"])
        .compile(checkpointer=saver)
    )
    c = cfg()
    driver.invoke(app, {"n": 0}, c)
    driver.invoke(app, {"n": 0}, c)
    hist = history(driver, app, c)
    loop_start_2nd = next(s for s in hist if s.next == ("inc",) and s.values["n"] == 0)
    seen.clear()
    driver.invoke(app, None, loop_start_2nd.config)
    assert seen == [("s", ["s"] * 2), ("s", ["s"] * 3)]  # 2nd turn loads the fresh checkpoint


def test_stateless_subgraph_starts_fresh_on_replay(driver, saver):
    seen: list[Any] = []
    app = _parent(saver, _stateful_chain(seen, "s", checkpointer=None))
    c = cfg()
    driver.invoke(app, {"results": []}, c)
    driver.invoke(app, {"results": []}, c)
    before_sub = next(s for s in history(driver, app, c) if s.next == ("sub",))
    seen.clear()
    driver.invoke(app, None, before_sub.config)
    assert seen == [("s", [])]


# -- travelling to a subgraph's own checkpoint ------------------------------------------------


def _ask_twice(saver, called, *, levels=1):
    sub = (
        StateGraph(S)
        .add_node("step_a", lambda s: called.append("step_a") or {"value": ["a"]})
        .add_node("ask_1", _asker(called, "ask_1"))
        .add_node("ask_2", _asker(called, "ask_2"))
        .add_edge(START, "step_a")
        .add_edge("step_a", "ask_1")
        .add_edge("ask_1", "ask_2")
        .compile(checkpointer=True)
    )
    for _ in range(levels - 1):
        sub = StateGraph(S).add_node("inner", sub).add_edge(START, "inner").compile(checkpointer=True)
    return StateGraph(S).add_node("ex", sub).add_edge(START, "ex").compile(checkpointer=saver)


def _innermost_config(snap, levels):
    for _ in range(levels):
        snap = snap.tasks[0].state
    return snap.config


@pytest.mark.parametrize("levels", [1, 2])
def test_replay_subgraph_checkpoint_refires_its_interrupt(driver, saver, levels):
    called: list[str] = []
    app = _ask_twice(saver, called, levels=levels)
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    sub_config = _innermost_config(state(driver, app, c, subgraphs=True), levels)
    cmap = sub_config["configurable"]["checkpoint_map"]
    assert cmap[sub_config["configurable"]["checkpoint_ns"]] == sub_config["configurable"]["checkpoint_id"]
    root_id = state(driver, app, c).config["configurable"]["checkpoint_id"]
    assert cmap[""] == root_id
    driver.invoke(app, Command(resume="x1"), c)
    driver.invoke(app, Command(resume="x2"), c)
    called.clear()
    out = driver.invoke(app, None, sub_config)
    assert [i.value for i in out["__interrupt__"]] == ["ask_1?"]
    assert called == ["ask_1"]  # step_a ran before that checkpoint
    hist = history(driver, app, c)
    assert (hist[0].metadata["source"], hist[0].next) == ("fork", ("ex",))
    assert hist[0].parent_config["configurable"]["checkpoint_id"] == root_id
    called.clear()
    assert "__interrupt__" in driver.invoke(app, Command(resume="y1"), c)
    assert driver.invoke(app, Command(resume="y2"), c) == {"value": ["a", "ask_1:y1", "ask_2:y2"]}
    assert called == ["ask_1", "ask_2", "ask_2"]


def test_fork_subgraph_checkpoint_then_resume_to_the_end(driver, saver):
    called: list[str] = []
    app = _ask_twice(saver, called)
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    driver.invoke(app, Command(resume="x1"), c)
    sub_config = state(driver, app, c, subgraphs=True).tasks[0].state.config
    driver.invoke(app, Command(resume="x2"), c)
    fork = update(driver, app, sub_config, {"value": ["f"]})
    assert fork["configurable"]["checkpoint_ns"] == "ex"
    assert fork["configurable"]["checkpoint_map"][""] == sub_config["configurable"]["checkpoint_map"][""]
    called.clear()
    out = driver.invoke(app, None, fork)
    assert [i.value for i in out["__interrupt__"]] == ["ask_2?"]
    assert called == ["ask_2"]
    assert driver.invoke(app, Command(resume="z"), fork) == {"value": ["a", "ask_1:x1", "f", "ask_2:z"]}


def test_replay_subgraph_checkpoint_and_resume_with_same_config(driver, saver):
    called: list[str] = []
    app = _ask_twice(saver, called)
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    sub_config = state(driver, app, c, subgraphs=True).tasks[0].state.config
    assert "__interrupt__" in driver.invoke(app, None, sub_config)
    called.clear()
    out = driver.invoke(app, Command(resume="r"), sub_config)
    assert [i.value for i in out["__interrupt__"]] == ["ask_2?"]
    assert called == ["ask_1", "ask_2"]


def test_subgraph_checkpoints_record_parent_checkpoints(driver, saver):
    called: list[str] = []
    app = _ask_twice(saver, called, levels=2)
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    root = state(driver, app, c, subgraphs=True)
    mid = root.tasks[0].state
    inner = mid.tasks[0].state
    root_id = root.config["configurable"]["checkpoint_id"]
    mid_id = mid.config["configurable"]["checkpoint_id"]
    assert mid.metadata["parents"] == {"": root_id}
    assert inner.metadata["parents"] == {"": root_id, "ex": mid_id}
    assert inner.config["configurable"]["checkpoint_ns"] == "ex|inner"
    assert "checkpoint_map" not in root.config["configurable"]


# -- interrupts in history ----------------------------------------------------------------------


def test_fork_of_resumed_interrupt_checkpoint_refires(driver, saver):
    called: list[str] = []
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"value": ["a"]})
        .add_node("ask", _asker(called, "ask"))
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .compile(checkpointer=saver)
    )
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    driver.invoke(app, Command(resume="one"), c)
    at_interrupt = next(s for s in history(driver, app, c) if s.next == ("ask",))
    [task] = at_interrupt.tasks
    assert [i.value for i in task.interrupts] == ["ask?"]  # resumed since, still shown
    assert task.result == {"value": ["ask:one"]}
    assert "__interrupt__" in driver.invoke(app, None, at_interrupt.config)
    fork = update(driver, app, at_interrupt.config, {"value": ["f"]})
    assert "__interrupt__" in driver.invoke(app, None, fork)
    assert driver.invoke(app, Command(resume="two"), fork) == {"value": ["a", "f", "ask:two"]}


def test_update_without_as_node_before_the_only_node_ran_acts_as_start(driver, saver):
    called: list[str] = []
    app = StateGraph(S).add_node("ask", _asker(called, "ask")).add_edge(START, "ask").compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    fork = update(driver, app, c, {"value": ["f"]})
    st = state(driver, app, fork)
    assert (st.next, st.metadata["source"]) == (("ask",), "update")
    assert "__interrupt__" in driver.invoke(app, None, fork)
    assert driver.invoke(app, Command(resume="r"), c) == {"value": ["f", "ask:r"]}


def test_copy_of_a_past_checkpoint_keeps_the_original_updatable(driver, saver):
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"value": ["a"]})
        .add_node("b", lambda s: {"value": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    c = cfg()
    driver.invoke(app, {"value": []}, c)
    before_b = next(s for s in history(driver, app, c) if s.next == ("b",))
    if driver.is_async:
        copy = asyncio.run(app.aupdate_state(before_b.config, None, as_node="__copy__"))
    else:
        copy = app.update_state(before_b.config, None, as_node="__copy__")
    st = state(driver, app, copy)
    assert (st.metadata["source"], st.values, st.next) == ("fork", {"value": ["a"]}, ("b",))
    updated = update(driver, app, before_b.config, {"value": ["x"]})
    assert state(driver, app, updated).values == {"value": ["a", "x"]}
    assert driver.invoke(app, None, copy) == {"value": ["a", "b"]}
