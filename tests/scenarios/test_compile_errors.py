"""Mistakes caught while building or compiling a StateGraph: all ValueErrors, as in LangGraph."""

from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


class S(TypedDict):
    n: int


def _noop(state: S) -> None:
    return None


def test_edge_to_unknown_node():
    """An edge ending at an unknown node fails compile."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    g.add_edge(START, "a")
    g.add_edge("a", "zzz")
    with pytest.raises(ValueError, match="Found edge ending at unknown node `zzz`"):
        g.compile()


def test_edge_from_unknown_node():
    """An edge starting at an unknown node fails compile."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    g.add_edge(START, "a")
    g.add_edge("zzz", "a")
    with pytest.raises(ValueError, match="Found edge starting at unknown node 'zzz'"):
        g.compile()


def test_waiting_edge_from_unknown_node():
    """A waiting edge with an unknown source is rejected by add_edge itself."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    g.add_node("b", _noop)
    with pytest.raises(ValueError, match="Need to add_node `ghost` first"):
        g.add_edge(["a", "ghost"], "b")


def test_no_entrypoint():
    """A graph without an edge from START fails compile."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    with pytest.raises(ValueError, match="Graph must have an entrypoint"):
        g.compile()


def test_duplicate_node():
    """Adding a node name twice fails at once."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    with pytest.raises(ValueError, match="Node `a` already present."):
        g.add_node("a", _noop)


@pytest.mark.parametrize("name", [START, END])
def test_reserved_node_names(name):
    """START and END cannot be node names."""
    g = StateGraph(S)
    with pytest.raises(ValueError, match=f"Node `{name}` is reserved."):
        g.add_node(name, _noop)


@pytest.mark.parametrize("name", ["a|b", "a:b"])
def test_reserved_characters_in_node_names(name):
    """'|' and ':' are not allowed in node names."""
    g = StateGraph(S)
    with pytest.raises(ValueError, match="is a reserved character and is not allowed"):
        g.add_node(name, _noop)


def test_end_cannot_be_a_source():
    """add_edge(END, ...) is rejected."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    with pytest.raises(ValueError, match="END cannot be a start node"):
        g.add_edge(END, "a")


def test_start_cannot_be_a_target():
    """add_edge(..., START) is rejected."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    with pytest.raises(ValueError, match="START cannot be an end node"):
        g.add_edge("a", START)


def _one(a):
    return a


def _three(a, b, c):
    return a


@pytest.mark.parametrize(
    ("reducer", "got"), [(_one, "(a)"), (_three, "(a, b, c)")], ids=["one", "three"]
)
def test_reducer_with_wrong_arity(reducer, got):
    """A reducer not taking exactly two arguments fails at StateGraph(...)."""

    class R(TypedDict):
        x: Annotated[list, reducer]

    with pytest.raises(ValueError) as info:
        StateGraph(R)
    assert str(info.value).startswith(
        f"Invalid reducer signature. Expected (a, b) -> c. Got {got}"
    )


def test_path_map_to_unknown_node():
    """A path_map naming an unknown node fails compile."""
    g = StateGraph(S)
    g.add_node("a", _noop)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "x", {"x": "nope"})
    with pytest.raises(ValueError, match="branch found unknown target 'nope'"):
        g.compile()


def test_add_node_after_compile_still_works_for_new_compile(driver):
    """Nodes added after a compile show up in the next compile, not the earlier one."""
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "a")
    first = g.compile()
    g.add_node("b", lambda s: {"n": s["n"] * 10})
    g.add_edge("a", "b")
    second = g.compile()
    assert driver.invoke(first, {"n": 1}) == {"n": 2}
    assert driver.invoke(second, {"n": 1}) == {"n": 20}


def test_unreachable_node_is_allowed(driver):
    """A node no edge leads to compiles and simply never runs."""
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("island", lambda s: {"n": 99})
    g.add_edge(START, "a")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 1}


def test_default_error_handler_name_is_reserved():
    """With ``set_node_defaults(error_handler=...)`` a node may not take the handler's name."""
    import pytest

    from stepgraph.errors import GraphDefinitionError

    g = (
        StateGraph(dict)
        .set_node_defaults(error_handler=lambda state, error: {})
        .add_node("__default_error_handler__", lambda s: s)
        .add_edge(START, "__default_error_handler__")
    )
    with pytest.raises(GraphDefinitionError, match="__default_error_handler__") as exc:
        g.compile()
    assert exc.value.code == "SG126"
