"""Durable execution, part 1: thread resume, interrupt()/Command(resume), static interrupts.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import operator
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


def test_second_invoke_continues_thread(driver, saver):
    app = _chain(saver, "a")
    c = cfg()
    assert driver.invoke(app, {"items": ["x"]}, c) == {"items": ["x", "a"]}
    assert driver.invoke(app, {"items": ["y"]}, c) == {"items": ["x", "a", "y", "a"]}
    other = cfg()
    assert driver.invoke(app, {"items": ["z"]}, other) == {"items": ["z", "a"]}


def _ask_graph(saver):
    def ask(s):
        answer = interrupt({"q": "name?"})
        return {"items": [f"hi {answer}"]}

    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_node("after", lambda s: {"items": ["after"]})
    g.add_edge(START, "ask")
    g.add_edge("ask", "after")
    return g.compile(checkpointer=saver)


def test_interrupt_resume_round_trip(driver, saver):
    app = _ask_graph(saver)
    c = cfg()
    out = driver.invoke(app, {"items": ["x"]}, c)
    assert list(out) == ["items", "__interrupt__"]
    assert out["items"] == ["x"]
    [intr] = out["__interrupt__"]
    assert intr.value == {"q": "name?"}
    st = get_state(driver, app, c)
    assert st.next == ("ask",)
    assert [i.id for i in st.interrupts] == [intr.id]
    assert st.tasks[0].interrupts[0].value == {"q": "name?"}
    out = driver.invoke(app, Command(resume="bob"), c)
    assert out == {"items": ["x", "hi bob", "after"]}
    st = get_state(driver, app, c)
    assert st.next == () and st.interrupts == () and st.tasks == ()


def test_interrupt_in_updates_stream(driver, saver):
    app = _ask_graph(saver)
    c = cfg()
    chunks = driver.stream(app, {"items": ["x"]}, c, stream_mode="updates")
    assert len(chunks) == 1
    [intr] = chunks[0]["__interrupt__"]
    assert list(chunks[0]) == ["__interrupt__"]
    assert intr.value == {"q": "name?"}
    chunks = driver.stream(app, Command(resume="al"), c, stream_mode="updates")
    assert chunks == [{"ask": {"items": ["hi al"]}}, {"after": {"items": ["after"]}}]


def test_two_interrupts_in_one_node_resume_in_order(driver, saver):
    calls = []

    def node(s):
        calls.append("run")
        a = interrupt("first")
        b = interrupt("second")
        return {"items": [a, b]}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    app = g.compile(checkpointer=saver)
    c = cfg()
    out = driver.invoke(app, {"items": []}, c)
    assert [i.value for i in out["__interrupt__"]] == ["first"]
    out = driver.invoke(app, Command(resume="A"), c)
    assert [i.value for i in out["__interrupt__"]] == ["second"]
    assert out["items"] == []
    out = driver.invoke(app, Command(resume="B"), c)
    assert out == {"items": ["A", "B"]}
    assert len(calls) == 3


def test_parallel_interrupts_resumed_with_map(driver, saver):
    def make(name):
        def node(s):
            return {"items": [f"{name}={interrupt(name)}"]}

        return node

    g = StateGraph(S)
    g.add_node("a", make("a"))
    g.add_node("b", make("b"))
    g.add_node("join", lambda s: {"items": ["join"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "join")
    app = g.compile(checkpointer=saver)
    c = cfg()
    out = driver.invoke(app, {"items": []}, c)
    assert sorted(i.value for i in out["__interrupt__"]) == ["a", "b"]
    st = get_state(driver, app, c)
    assert set(st.next) == {"a", "b"}
    ids = {i.value: i.id for i in st.interrupts}
    assert len(ids) == 2
    out = driver.invoke(app, Command(resume={ids["a"]: 1, ids["b"]: 2}), c)
    assert sorted(out["items"][:2]) == ["a=1", "b=2"]
    assert out["items"][2:] == ["join"]
    assert get_state(driver, app, c).next == ()


def test_parallel_interrupts_resumed_one_at_a_time(driver, saver):
    def make(name):
        def node(s):
            return {"items": [f"{name}={interrupt(name)}"]}

        return node

    g = StateGraph(S)
    g.add_node("a", make("a"))
    g.add_node("b", make("b"))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"items": []}, c)
    ids = {i.value: i.id for i in get_state(driver, app, c).interrupts}
    out = driver.invoke(app, Command(resume={ids["a"]: 1}), c)
    assert [i.value for i in out["__interrupt__"]] == ["b"]
    st = get_state(driver, app, c)
    assert st.next == ("b",)
    out = driver.invoke(app, Command(resume={ids["b"]: 2}), c)
    assert sorted(out["items"]) == ["a=1", "b=2"]


@pytest.mark.parametrize("where", ["compile", "call"])
def test_interrupt_before(driver, saver, where):
    if where == "compile":
        app = _chain(saver, "a", "b", "c", interrupt_before=["b"])
        kw = {}
    else:
        app = _chain(saver, "a", "b", "c")
        kw = {"interrupt_before": ["b"]}
    c = cfg()
    out = driver.invoke(app, {"items": []}, c, **kw)
    assert out == {"items": ["a"]}
    st = get_state(driver, app, c)
    assert st.next == ("b",)
    assert st.interrupts == ()
    out = driver.invoke(app, None, c)
    assert out == {"items": ["a", "b", "c"]}


@pytest.mark.parametrize("where", ["compile", "call"])
def test_interrupt_after(driver, saver, where):
    if where == "compile":
        app = _chain(saver, "a", "b", "c", interrupt_after=["a"])
        kw = {}
    else:
        app = _chain(saver, "a", "b", "c")
        kw = {"interrupt_after": ["a"]}
    c = cfg()
    out = driver.invoke(app, {"items": []}, c, **kw)
    assert out == {"items": ["a"]}
    assert get_state(driver, app, c).next == ("b",)
    out = driver.invoke(app, None, c)
    assert out == {"items": ["a", "b", "c"]}


def test_interrupt_before_in_updates_stream(driver, saver):
    app = _chain(saver, "a", "b", interrupt_before=["b"])
    c = cfg()
    chunks = driver.stream(app, {"items": []}, c, stream_mode="updates")
    assert chunks == [{"a": {"items": ["a"]}}, {"__interrupt__": ()}]
    chunks = driver.stream(app, None, c, stream_mode="updates")
    assert chunks == [{"b": {"items": ["b"]}}]


def test_interrupt_before_all(driver, saver):
    app = _chain(saver, "a", "b", interrupt_before="*")
    c = cfg()
    assert driver.invoke(app, {"items": []}, c) == {"items": []}
    assert get_state(driver, app, c).next == ("a",)
    assert driver.invoke(app, None, c) == {"items": ["a"]}
    assert get_state(driver, app, c).next == ("b",)
    assert driver.invoke(app, None, c) == {"items": ["a", "b"]}
    assert get_state(driver, app, c).next == ()
