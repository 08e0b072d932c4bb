"""Compiled graphs used inside other graphs: as a node, or invoked from a node."""

import operator
import re
from typing import Annotated

from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph

SUBGRAPH_STREAM_BUG = (
    "stepgraph bug: stream(subgraphs=True) yields no chunks from inside subgraphs "
    "(only the parent's (), {...} chunks)"
)


class S(TypedDict):
    items: Annotated[list, operator.add]
    n: int


class Outer(TypedDict):
    text: str


def _sub():
    g = StateGraph(S)
    g.add_node("inner", lambda s: {"items": [f"inner saw {s['n']}"]})
    g.add_edge(START, "inner")
    return g.compile()


def _parent_with_subgraph_node():
    g = StateGraph(S)
    g.add_node("pre", lambda s: {"n": 7})
    g.add_node("sub", _sub())
    g.add_edge(START, "pre")
    g.add_edge("pre", "sub")
    return g.compile()


def _parent_calling_subgraph(driver):
    sub = _sub()

    if driver.is_async:

        async def call(state: Outer) -> dict:
            out = await sub.ainvoke({"items": [], "n": len(state["text"])})
            return {"text": state["text"] + "|" + ",".join(out["items"])}

    else:

        def call(state: Outer) -> dict:
            out = sub.invoke({"items": [], "n": len(state["text"])})
            return {"text": state["text"] + "|" + ",".join(out["items"])}

    g = StateGraph(Outer)
    g.add_node("call", call)
    g.add_edge(START, "call")
    return g.compile()


def _ns(chunks):
    """Replace task ids in namespaces by '<id>'."""
    return [(tuple(re.sub(r":[0-9a-f-]{36}$", ":<id>", p) for p in ns), c) for ns, c in chunks]


def test_subgraph_as_node(driver):
    """A compiled graph as a node gets the parent state and returns its own output as update."""
    out = driver.invoke(_parent_with_subgraph_node(), {"items": [], "n": 0})
    assert out == {"items": ["inner saw 7"], "n": 7}


def test_subgraph_as_node_updates(driver):
    """Without subgraphs=True the parent streams the subgraph node's whole update."""
    chunks = driver.stream(_parent_with_subgraph_node(), {"items": [], "n": 0}, stream_mode="updates")
    assert chunks == [{"pre": {"n": 7}}, {"sub": {"items": ["inner saw 7"], "n": 7}}]


def test_subgraph_invoked_inside_node(driver):
    """A node may invoke another compiled graph and use its result."""
    assert driver.invoke(_parent_calling_subgraph(driver), {"text": "abc"}) == {
        "text": "abc|inner saw 3"
    }


def test_stream_subgraphs_from_subgraph_node(driver):
    """subgraphs=True also yields the subgraph's own chunks under its namespace."""
    chunks = driver.stream(
        _parent_with_subgraph_node(), {"items": [], "n": 0}, stream_mode="updates", subgraphs=True
    )
    assert _ns(chunks) == [
        ((), {"pre": {"n": 7}}),
        (("sub:<id>",), {"inner": {"items": ["inner saw 7"]}}),
        ((), {"sub": {"items": ["inner saw 7"], "n": 7}}),
    ]


def test_stream_subgraphs_from_graph_invoked_in_node(driver):
    """subgraphs=True sees a graph invoked inside a node, namespaced by that node."""
    chunks = driver.stream(
        _parent_calling_subgraph(driver), {"text": "abc"}, stream_mode="updates", subgraphs=True
    )
    assert _ns(chunks) == [
        (("call:<id>",), {"inner": {"items": ["inner saw 3"]}}),
        ((), {"call": {"text": "abc|inner saw 3"}}),
    ]


def test_subgraphs_run_with_their_parents_durability(driver, tmp_path):
    """A subgraph inherits its parent's durability: with ``"exit"`` a finished subgraph
    stores nothing (its parent's checkpoint holds the result), an interrupted one does."""
    from scenario_savers import cfg

    from stepgraph.checkpoint.memory import InMemorySaver
    from stepgraph.types import Command, interrupt

    class S(TypedDict):
        log: Annotated[list, operator.add]

    seen: list[str] = []

    def inner(state, config):
        seen.append(config["configurable"]["__pregel_durability"])
        return {"log": ["inner"]}

    def ask(state):
        return {"log": [interrupt("q")]}

    for durability in ("sync", "exit"):
        saver = InMemorySaver()
        child = StateGraph(S).add_node("inner", inner).add_edge(START, "inner").compile()
        app = StateGraph(S).add_node("child", child).add_edge(START, "child").compile(
            checkpointer=saver)
        config = cfg()
        driver.invoke(app, {"log": []}, config, durability=durability)
        namespaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(config)}
        assert (namespaces == {""}) == (durability == "exit")
    assert seen == ["sync", "exit"]

    saver = InMemorySaver()
    child = StateGraph(S).add_node("ask", ask).add_edge(START, "ask").compile()
    app = StateGraph(S).add_node("child", child).add_edge(START, "child").compile(checkpointer=saver)
    config = cfg()
    driver.invoke(app, {"log": []}, config, durability="exit")
    assert driver.invoke(app, Command(resume="a"), config, durability="exit") == {"log": ["a"]}
