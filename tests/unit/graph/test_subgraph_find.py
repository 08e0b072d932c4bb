"""Which graphs a function node is found to call (``graph.subgraph_find``)."""

from __future__ import annotations

import functools
from typing import Any

from stepgraph.graph import START, StateGraph
from stepgraph.graph.subgraph_find import find_subgraphs


def _graph(name: str) -> Any:
    g = StateGraph(dict).add_node("x", lambda s: s).add_edge(START, "x").compile()
    g.name = name
    return g


class Holder:
    def __init__(self, value: Any) -> None:
        self.value = value


class Slotted:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Computed:
    @property
    def value(self) -> Any:
        raise AssertionError("detection must not run user code")


TOP = _graph("top")
NESTED = Holder(Holder(_graph("nested-global")))
COMPUTED = Computed()


def names(fn: Any) -> list[str]:
    return [g.name for g in find_subgraphs(fn)]


def test_closures_globals_and_attribute_chains() -> None:
    direct = _graph("direct")
    held = Holder(_graph("held"))
    slotted = Slotted(_graph("slotted"))

    def node(state: Any) -> Any:
        direct.invoke(state)
        held.value.invoke(state)
        slotted.value.invoke(state)
        NESTED.value.value.invoke(state)
        return TOP.invoke(state)

    assert names(node) == ["direct", "held", "slotted", "nested-global", "top"]


def test_nested_functions_see_closures_not_globals() -> None:
    held = Holder(_graph("inner-closure"))

    def node(state: Any) -> Any:
        def inner() -> Any:
            TOP.invoke(state)  # a global named only here: out of reach
            return held.value.invoke(state)

        return inner()

    assert names(node) == ["inner-closure"]


def test_wrapped_partial_and_unused_closure() -> None:
    sub = _graph("wrapped")

    def inner(state: Any, extra: int) -> Any:
        return sub.invoke(state)

    def wrapper(state: Any) -> Any:
        return state

    wrapper.__wrapped__ = functools.partial(inner, extra=1)  # type: ignore[attr-defined]
    assert names(wrapper) == ["wrapped"]
    unused = _graph("unused")

    def node(state: Any) -> Any:
        if False:
            unused.invoke(state)
        return state

    assert names(node) == ["unused"]  # the closure holds it even if the call was dropped


def test_what_is_not_followed() -> None:
    graphs = [_graph("in-list")]
    text = Holder("just text")

    def node(state: Any) -> Any:
        graphs[0].invoke(state)  # subscripts are not followed
        text.value.missing.invoke(state)  # a chain through data stops
        return COMPUTED.value  # properties are never evaluated

    assert names(node) == []
    assert find_subgraphs(len) == [] and find_subgraphs(functools.partial(print)) == []


def test_compiled_node_exposes_what_was_found() -> None:
    held = Holder(_graph("child"))
    builder = StateGraph(dict).add_node("n", lambda s: held.value.invoke(s)).add_edge(START, "n")
    assert [g.name for g in builder.compile().nodes["n"].subgraphs] == ["child"]


def test_a_function_added_as_several_nodes_gives_each_node_its_own_list() -> None:
    sub = _graph("shared-sub")

    def call(s: Any) -> Any:
        return sub.invoke(s)

    b = StateGraph(dict).add_node("a", call).add_node("b", call)
    b.add_node("plain", lambda s: s).add_node("graph", sub)
    b.add_edge(START, "a").add_edge("a", "b").add_edge("b", "plain").add_edge("plain", "graph")
    nodes = b.compile().nodes
    assert nodes["a"].subgraphs == [sub] and nodes["b"].subgraphs == [sub]
    assert nodes["a"].subgraphs is not nodes["b"].subgraphs
    assert nodes["plain"].subgraphs == [] and nodes["graph"].subgraphs == [sub]
