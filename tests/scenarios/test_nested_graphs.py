"""Nested graphs without a checkpointer: embedding, detection, namespaces, output, Command.PARENT.

Expected outputs were taken from LangGraph 1.2.22 run as an oracle (semantics §2.19, items
117, 118, 120, 122).
"""

from __future__ import annotations

import operator
import re
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError, StepgraphError
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command


class S(TypedDict):
    log: Annotated[list, operator.add]


def _leaf(name):
    return lambda s: {"log": [name]}


def _three_levels(grandchild_checkpointer=None):
    """root: p1 -> child; child: c1 -> grandchild; grandchild: g1."""
    g = StateGraph(S)
    g.add_node("g1", _leaf("g1"))
    g.add_edge(START, "g1")
    c = StateGraph(S)
    c.add_node("c1", _leaf("c1"))
    c.add_node("grandchild", g.compile(checkpointer=grandchild_checkpointer))
    c.add_edge(START, "c1")
    c.add_edge("c1", "grandchild")
    p = StateGraph(S)
    p.add_node("p1", _leaf("p1"))
    p.add_node("child", c.compile())
    p.add_edge(START, "p1")
    p.add_edge("p1", "child")
    return p.compile()


def _caller(driver):
    """A root whose plain function node invokes the three-level graph itself."""
    sub = _three_levels()
    if driver.is_async:

        async def call(state: S) -> dict:
            out = await sub.ainvoke({"log": ["x"]})
            return {"log": ["call:" + ",".join(out["log"])]}

    else:

        def call(state: S) -> dict:
            out = sub.invoke({"log": ["x"]})
            return {"log": ["call:" + ",".join(out["log"])]}

    g = StateGraph(S)
    g.add_node("call", call)
    g.add_edge(START, "call")
    return g.compile()


_TASK_NS = re.compile(r"^(\w+):[0-9a-f-]{36}$")


def _norm(ns):
    """Check every namespace segment is 'node:<task_id>' and replace the id by '<id>'."""
    assert isinstance(ns, tuple)
    out = []
    for seg in ns:
        m = _TASK_NS.match(seg)
        assert m, seg
        out.append(f"{m.group(1)}:<id>")
    return tuple(out)


FULL = ["in", "p1", "in", "p1", "c1", "in", "p1", "c1", "g1"]


def test_compiled_graph_as_node_three_levels(driver):
    """Compiled graphs nest as nodes; each level returns its whole output state as the update."""
    assert driver.invoke(_three_levels(), {"log": ["in"]}) == {"log": FULL}


def test_function_node_invokes_subgraph(driver):
    """A plain function node may invoke (or await ainvoke of) a compiled graph."""
    out = driver.invoke(_caller(driver), {"log": []})
    assert out == {"log": ["call:x,p1,x,p1,c1,x,p1,c1,g1"]}


def test_subgraph_output_duplicates_append_history(driver):
    """A subgraph's whole output re-appends the shared reducer history to the parent (item 120)."""
    c = StateGraph(S)
    c.add_node("c1", _leaf("c1"))
    c.add_edge(START, "c1")
    p = StateGraph(S)
    p.add_node("p", _leaf("p"))
    p.add_node("child", c.compile())
    p.add_edge(START, "p")
    p.add_edge("p", "child")
    app = p.compile()
    assert driver.invoke(app, {"log": ["in"]}) == {"log": ["in", "p", "in", "p", "c1"]}
    chunks = driver.stream(app, {"log": ["in"]}, stream_mode="values")
    assert chunks == [
        {"log": ["in"]},
        {"log": ["in", "p"]},
        {"log": ["in", "p", "in", "p", "c1"]},
    ]


def test_get_subgraphs_names():
    """get_subgraphs lists direct children; recurse=True joins nested names with '|'."""
    app = _three_levels()
    assert [n for n, _ in app.get_subgraphs()] == ["child"]
    assert [n for n, _ in app.get_subgraphs(recurse=True)] == ["child", "child|grandchild"]
    assert [n for n, _ in app.get_subgraphs(namespace="child")] == ["child"]
    ((name, graph),) = app.get_subgraphs()
    assert [n for n, _ in graph.get_subgraphs()] == ["grandchild"]


def test_get_subgraphs_skips_checkpointer_false_child():
    """A child compiled with checkpointer=False is not listed by get_subgraphs."""
    app = _three_levels(grandchild_checkpointer=False)
    assert [n for n, _ in app.get_subgraphs(recurse=True)] == ["child"]


def test_get_subgraphs_finds_graph_called_in_function_node(driver):
    """A graph invoked inside a function node is detected through the function's closure."""
    names = [n for n, _ in _caller(driver).get_subgraphs(recurse=True)]
    assert names == ["call", "call|child", "call|child|grandchild"]


SUBGRAPH_UPDATES = [
    ((), {"p1": {"log": ["p1"]}}),
    (("child:<id>",), {"c1": {"log": ["c1"]}}),
    (("child:<id>", "grandchild:<id>"), {"g1": {"log": ["g1"]}}),
    (("child:<id>",), {"grandchild": {"log": ["in", "p1", "c1", "g1"]}}),
    ((), {"child": {"log": ["in", "p1", "c1", "in", "p1", "c1", "g1"]}}),
]


def test_stream_subgraphs_three_levels(driver):
    """stream(subgraphs=True) yields (ns, chunk): () at the root, one 'node:<id>' per level."""
    chunks = driver.stream(_three_levels(), {"log": ["in"]}, subgraphs=True)
    assert all(len(c) == 2 for c in chunks)
    assert [(_norm(ns), c) for ns, c in chunks] == SUBGRAPH_UPDATES


def test_stream_subgraphs_checkpointer_false_still_namespaced(driver):
    """A checkpointer=False grandchild is unlisted but still streams under its namespace."""
    chunks = driver.stream(_three_levels(False), {"log": ["in"]}, subgraphs=True)
    assert [(_norm(ns), c) for ns, c in chunks] == SUBGRAPH_UPDATES


def test_stream_subgraphs_multiple_modes(driver):
    """With a list of modes, subgraphs=True yields (ns, mode, chunk) triples."""
    chunks = driver.stream(
        _three_levels(), {"log": ["in"]}, subgraphs=True, stream_mode=["updates", "values"]
    )
    assert all(len(c) == 3 for c in chunks)
    c, g = ("child:<id>",), ("child:<id>", "grandchild:<id>")
    assert [(_norm(ns), m, x) for ns, m, x in chunks] == [
        ((), "values", {"log": ["in"]}),
        ((), "updates", {"p1": {"log": ["p1"]}}),
        ((), "values", {"log": ["in", "p1"]}),
        (c, "values", {"log": ["in", "p1"]}),
        (c, "updates", {"c1": {"log": ["c1"]}}),
        (c, "values", {"log": ["in", "p1", "c1"]}),
        (g, "values", {"log": ["in", "p1", "c1"]}),
        (g, "updates", {"g1": {"log": ["g1"]}}),
        (g, "values", {"log": ["in", "p1", "c1", "g1"]}),
        (c, "updates", {"grandchild": {"log": ["in", "p1", "c1", "g1"]}}),
        (c, "values", {"log": ["in", "p1", "c1", "in", "p1", "c1", "g1"]}),
        ((), "updates", {"child": {"log": ["in", "p1", "c1", "in", "p1", "c1", "g1"]}}),
        ((), "values", {"log": FULL}),
    ]


def test_stream_subgraphs_of_graph_called_in_function_node(driver):
    """A graph invoked inside node 'call' streams under ('call:<id>', ...) namespaces."""
    chunks = driver.stream(_caller(driver), {"log": []}, subgraphs=True)
    k = "call:<id>"
    assert [(_norm(ns), c) for ns, c in chunks] == [
        ((k,), {"p1": {"log": ["p1"]}}),
        ((k, "child:<id>"), {"c1": {"log": ["c1"]}}),
        ((k, "child:<id>", "grandchild:<id>"), {"g1": {"log": ["g1"]}}),
        ((k, "child:<id>"), {"grandchild": {"log": ["x", "p1", "c1", "g1"]}}),
        ((k,), {"child": {"log": ["x", "p1", "c1", "x", "p1", "c1", "g1"]}}),
        ((), {"call": {"log": ["call:x,p1,x,p1,c1,x,p1,c1,g1"]}}),
    ]


def _jump(s):
    return Command(graph=Command.PARENT, goto="other", update={"log": ["from-child"]})


def _parent_command_app():
    c = StateGraph(S)
    c.add_node("jump", _jump)
    c.add_node("never", _leaf("never"))
    c.add_edge(START, "jump")
    c.add_edge("jump", "never")
    p = StateGraph(S)
    p.add_node("child", c.compile())
    p.add_node("other", _leaf("other"))
    p.add_node("after", _leaf("after"))
    p.add_edge(START, "child")
    p.add_edge("child", "after")
    return p.compile()


def test_command_parent_routes_parent(driver):
    """Command(graph=PARENT) from a child applies update/goto in the parent; the child stops."""
    assert driver.invoke(_parent_command_app(), {"log": []}) == {
        "log": ["from-child", "after", "other"]
    }
    assert driver.stream(_parent_command_app(), {"log": []}) == [
        {"child": {"log": ["from-child"]}},
        {"after": {"log": ["after"]}},
        {"other": {"log": ["other"]}},
    ]


def test_command_parent_stream_subgraphs(driver):
    """The child node that bubbles Command.PARENT emits no update of its own in the child ns."""
    chunks = driver.stream(_parent_command_app(), {"log": []}, subgraphs=True)
    assert [(_norm(ns), c) for ns, c in chunks] == [
        ((), {"child": {"log": ["from-child"]}}),
        ((), {"after": {"log": ["after"]}}),
        ((), {"other": {"log": ["other"]}}),
    ]


@pytest.mark.stepgraph_only
def test_command_parent_at_root_raises_coded_error(driver):
    """A root node returning Command(graph=PARENT) raises stepgraph's coded InvalidUpdateError."""
    g = StateGraph(S)
    g.add_node("jump", _jump)
    g.add_node("other", _leaf("other"))
    g.add_edge(START, "jump")
    with pytest.raises(InvalidUpdateError) as info:
        driver.invoke(g.compile(), {"log": []})
    assert isinstance(info.value, StepgraphError)
    assert info.value.code.startswith("SG")


def test_command_parent_as_input_raises(driver):
    """Command(graph=PARENT) as graph input raises InvalidUpdateError('There is no parent graph')."""
    with pytest.raises(InvalidUpdateError, match="There is no parent graph"):
        driver.invoke(_parent_command_app(), Command(graph=Command.PARENT, update={"log": ["x"]}))
