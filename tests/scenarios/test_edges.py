"""Edges: conditional edges (path maps, Literal hints), waiting edges, defer, router state."""

import operator
from typing import Annotated, Literal

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


class S(TypedDict):
    n: int
    trail: Annotated[list, operator.add]


def _mark(name):
    def node(state: S) -> dict:
        return {"trail": [name]}

    return node


def _branchy(router, path_map=None, targets=("big", "small")):
    g = StateGraph(S)
    g.add_node("start", _mark("start"))
    for t in targets:
        g.add_node(t, _mark(t))
        g.add_edge(t, END)
    g.add_edge(START, "start")
    if path_map is None:
        g.add_conditional_edges("start", router)
    else:
        g.add_conditional_edges("start", router, path_map)
    return g.compile()


def test_conditional_edge_without_path_map(driver):
    """A router returning node names routes directly to them."""
    app = _branchy(lambda s: "big" if s["n"] > 10 else "small")
    assert driver.invoke(app, {"n": 50}) == {"n": 50, "trail": ["start", "big"]}
    assert driver.invoke(app, {"n": 1}) == {"n": 1, "trail": ["start", "small"]}


def test_conditional_edge_with_dict_path_map(driver):
    """A dict path_map translates router results to node names (and END)."""
    app = _branchy(
        lambda s: "hi" if s["n"] > 10 else ("lo" if s["n"] > 0 else "stop"),
        {"hi": "big", "lo": "small", "stop": END},
    )
    assert driver.invoke(app, {"n": 11}) == {"n": 11, "trail": ["start", "big"]}
    assert driver.invoke(app, {"n": 3}) == {"n": 3, "trail": ["start", "small"]}
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["start"]}


def test_conditional_edge_with_list_path_map(driver):
    """A list path_map names the possible targets; the router returns one of them."""
    app = _branchy(lambda s: "small", ["big", "small"])
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["start", "small"]}


def test_router_returning_list_fans_out(driver):
    """A router returning several names runs them all in the next step."""
    app = _branchy(lambda s: ["big", "small"])
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["start", "big", "small"]}


def test_router_returning_end(driver):
    """A router returning END stops the run."""
    app = _branchy(lambda s: END)
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["start"]}


def test_literal_return_hint_defines_branch_targets(driver):
    """A router's Literal return hint lists its targets for the graph drawing and routing."""

    def route(state: S) -> Literal["big", "small", "__end__"]:
        return "big" if state["n"] else "__end__"

    app = _branchy(route)
    assert driver.invoke(app, {"n": 1}) == {"n": 1, "trail": ["start", "big"]}
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["start"]}


def test_literal_hint_with_unknown_target_fails_compile():
    """A Literal hint naming a node that does not exist fails at compile time."""

    def route(state: S) -> Literal["big", "nowhere"]:
        return "big"

    with pytest.raises(ValueError, match="nowhere"):
        _branchy(route)


def test_literal_hint_edges_in_drawing():
    """get_graph() draws a conditional edge for every target of a router's Literal hint."""

    def route(state: S) -> Literal["big", "small", "__end__"]:
        return "big"

    app = _branchy(route)
    edges = {(e.source, e.target, e.conditional) for e in app.get_graph().edges}
    assert ("start", "big", True) in edges
    assert ("start", "small", True) in edges
    assert ("start", "__end__", True) in edges


def test_conditional_entry_point(driver):
    """set_conditional_entry_point routes from START."""
    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b", _mark("b"))
    g.set_conditional_entry_point(lambda s: "a" if s["n"] % 2 else "b")
    app = g.compile()
    assert driver.invoke(app, {"n": 1}) == {"n": 1, "trail": ["a"]}
    assert driver.invoke(app, {"n": 2}) == {"n": 2, "trail": ["b"]}


def test_loop_until_condition(driver):
    """A conditional self-loop runs until the router returns END."""
    g = StateGraph(S)
    g.add_node("step", lambda s: {"n": s["n"] + 1, "trail": [s["n"]]})
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < 4 else END)
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 4, "trail": [0, 1, 2, 3]}


def _diamond(waiting: bool):
    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b1", _mark("b1"))
    g.add_node("b2", _mark("b2"))
    g.add_node("c", _mark("c"))
    g.add_edge(START, "a")
    g.add_edge(START, "b1")
    g.add_edge("b1", "b2")
    if waiting:
        g.add_edge(["a", "b2"], "c")
    else:
        g.add_edge("a", "c")
        g.add_edge("b2", "c")
    g.add_edge("c", END)
    return g.compile()


def test_waiting_edge_runs_join_once(driver):
    """add_edge([a, b2], c) waits for both: c runs once, after the longer branch."""
    assert driver.invoke(_diamond(True), {"n": 0}) == {"n": 0, "trail": ["a", "b1", "b2", "c"]}


def test_separate_edges_run_join_twice(driver):
    """Two plain edges into c trigger it once per arriving branch."""
    out = driver.invoke(_diamond(False), {"n": 0})
    assert out == {"n": 0, "trail": ["a", "b1", "b2", "c", "c"]}


def test_waiting_edge_step_updates(driver):
    """With a waiting edge the join runs in the step after the last branch finishes."""
    chunks = driver.stream(_diamond(True), {"n": 0}, stream_mode="updates")
    assert chunks == [
        {"a": {"trail": ["a"]}},
        {"b1": {"trail": ["b1"]}},
        {"b2": {"trail": ["b2"]}},
        {"c": {"trail": ["c"]}},
    ]


def test_defer_node_waits_for_branches(driver):
    """defer=True delays a node until no other task is pending; it runs once."""
    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b1", _mark("b1"))
    g.add_node("b2", _mark("b2"))
    g.add_node("b3", _mark("b3"))
    g.add_node("final", lambda s: {"trail": [f"final saw {len(s['trail'])}"]}, defer=True)
    g.add_edge(START, "a")
    g.add_edge(START, "b1")
    g.add_edge("b1", "b2")
    g.add_edge("b2", "b3")
    g.add_edge("a", "final")
    g.add_edge("b3", "final")
    app = g.compile()
    out = driver.invoke(app, {"n": 0})
    assert out == {"n": 0, "trail": ["a", "b1", "b2", "b3", "final saw 4"]}


def test_router_sees_nodes_own_writes(driver):
    """A conditional edge's router reads the state including its node's fresh writes."""
    seen = []

    def router(state: S) -> str:
        seen.append(dict(state))
        return "done" if state["n"] >= 2 else "again"

    g = StateGraph(S)
    g.add_node("bump", lambda s: {"n": s["n"] + 1, "trail": ["bump"]})
    g.add_edge(START, "bump")
    g.add_conditional_edges("bump", router, {"again": "bump", "done": END})
    out = driver.invoke(g.compile(), {"n": 0, "trail": ["in"]})
    assert out == {"n": 2, "trail": ["in", "bump", "bump"]}
    assert seen == [
        {"n": 1, "trail": ["in", "bump"]},
        {"n": 2, "trail": ["in", "bump", "bump"]},
    ]


def test_router_fresh_state_ignores_parallel_siblings(driver):
    """The router sees its own node's writes, not a parallel sibling's writes of the same step."""
    seen = []

    def router(state: S) -> str:
        seen.append(list(state["trail"]))
        return END

    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b", _mark("b"))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_conditional_edges("a", router)
    out = driver.invoke(g.compile(), {"n": 0})
    assert out == {"n": 0, "trail": ["a", "b"]}
    assert seen == [["a"]]


def test_router_with_config_param(driver):
    """A router may take (state, config) and read configurable values."""

    def router(state: S, config) -> str:
        return config["configurable"]["target"]

    app = _branchy(router)
    config = {"configurable": {"target": "small"}}
    assert driver.invoke(app, {"n": 0}, config) == {"n": 0, "trail": ["start", "small"]}


def test_edge_from_node_to_end_and_another(driver):
    """A node with edges to END and to another node still runs that node."""
    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b", _mark("b"))
    g.add_edge(START, "a")
    g.add_edge("a", END)
    g.add_edge("a", "b")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 0, "trail": ["a", "b"]}
