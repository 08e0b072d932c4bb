"""``stepgraph._collector``: compiling runs with the cyclic collector paused (one counter for
every kind of burst) and leaves it as it found it."""

from __future__ import annotations

import gc
from typing import TypedDict

from stepgraph._collector import paused as collector_paused
from stepgraph.graph import END, START, StateGraph


class S(TypedDict):
    x: int


def _builder() -> StateGraph:
    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": s["x"] + 1})
    b.add_edge(START, "a")
    b.add_edge("a", END)
    return b


def test_paused_inside_and_enabled_again_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested (another thread's burst): still paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_enabled_again_after_an_error() -> None:
    try:
        with collector_paused():
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        _builder().compile()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_compile_leaves_the_collector_enabled() -> None:
    graph = _builder().compile()
    assert gc.isenabled()
    assert graph.invoke({"x": 1}) == {"x": 2}


def test_compile_error_leaves_the_collector_enabled() -> None:
    b = StateGraph(S)
    b.add_node("a", lambda s: s)
    try:
        b.compile()  # no entry point
    except Exception:  # noqa: BLE001 - any definition error
        pass
    assert gc.isenabled()
