"""LangChain callbacks of a run: one chain run per invoke, its nodes as child runs, and
LangSmith run trees inside nodes; on both drivers (and every saver where a run pauses).

Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any
from unittest.mock import patch

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send

pytest.importorskip("langchain_core")

from langchain_core.tracers import BaseTracer  # noqa: E402


class Collector(BaseTracer):
    """Keeps the root runs it sees end (child runs hang below them)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        self.runs.append(run)


def _tree(run: Any) -> tuple[Any, ...]:
    tags = tuple(t for t in run.tags or () if t.startswith("graph:step"))
    return (run.name, tags, tuple(_tree(c) for c in run.child_runs))


class S(TypedDict):
    items: Annotated[list[str], operator.add]


def _chain(*names, **compile_kw):
    g = StateGraph(S)
    prev = START
    for n in names:
        g.add_node(n, lambda s, n=n: {"items": [n]})
        g.add_edge(prev, n)
        prev = n
    g.add_edge(prev, END)
    return g.compile(**compile_kw)


def test_one_root_run_with_a_child_run_per_node(driver):
    tracer = Collector()
    out = driver.invoke(_chain("a", "b"), {"items": []}, {"callbacks": [tracer], "run_name": "mine"})
    assert out == {"items": ["a", "b"]}
    [root] = tracer.runs
    assert _tree(root) == ("mine", (), (("a", ("graph:step:1",), ()), ("b", ("graph:step:2",), ())))
    assert root.outputs == {"items": ["a", "b"]}
    assert root.inputs == {"items": []}
    assert root.extra["metadata"]["ls_integration"] == "langgraph"
    assert root.child_runs[0].extra["metadata"]["langgraph_node"] == "a"


def test_subgraph_run_nests_under_its_node(driver):
    tracer = Collector()
    inner = _chain("x")
    outer = StateGraph(S).add_node("sub", inner).add_edge(START, "sub").compile()
    driver.invoke(outer, {"items": []}, {"callbacks": [tracer]})
    [root] = tracer.runs
    assert _tree(root) == (
        "LangGraph", (), (("sub", ("graph:step:1",), (("LangGraph", (), (("x", ("graph:step:1",), ()),)),)),)
    )


def test_failing_node_ends_both_runs_with_the_error(driver):
    tracer = Collector()

    def boom(s):
        raise ValueError("no")

    app = StateGraph(S).add_node("boom", boom).add_edge(START, "boom").compile()
    with pytest.raises(ValueError, match="no"):
        driver.invoke(app, {"items": []}, {"callbacks": [tracer]})
    [root] = tracer.runs
    assert "ValueError" in root.error
    assert "ValueError" in root.child_runs[0].error


def test_node_sees_its_run_as_parent_of_what_it_calls(driver):
    from langchain_core.runnables import RunnableLambda

    tracer = Collector()
    inner = RunnableLambda(lambda x: x, name="helper")
    app = (
        StateGraph(S)
        .add_node("n", lambda s, config: inner.invoke({"items": ["h"]}, config))
        .add_edge(START, "n")
        .compile()
    )
    driver.invoke(app, {"items": []}, {"callbacks": [tracer]})
    [root] = tracer.runs
    assert _tree(root) == ("LangGraph", (), (("n", ("graph:step:1",), (("helper", (), ()),)),))


def test_langsmith_run_tree_inside_a_node(driver):
    import langsmith
    from langsmith import get_current_run_tree

    class St(TypedDict):
        run_id: Any

    app = StateGraph(St).add_node("n", lambda s: {"run_id": get_current_run_tree().id}).add_edge(START, "n").compile()
    with patch("langsmith.client.Client", spec=langsmith.Client) as client, patch(
        "langchain_core.tracers.langchain.get_client"
    ) as get_client:
        get_client.return_value = client
        with langsmith.tracing_context(enabled=True):
            out = driver.invoke(app, {"run_id": None})
    assert out["run_id"] is not None


def test_no_callbacks_no_runs(driver):
    tracer = Collector()
    driver.invoke(_chain("a"), {"items": []})
    assert tracer.runs == []


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def test_paused_subgraphs_still_give_one_root_run(driver, saver):
    class Joke(TypedDict):
        subject: str

    sub = StateGraph(Joke, output_schema=S)
    sub.add_node("edit", lambda s: {"subject": s["subject"] + "!"})
    sub.add_node("tell", lambda s: {"items": [s["subject"]]})
    sub.add_edge(START, "edit")
    sub.add_edge("edit", "tell")

    class Top(TypedDict):
        subjects: list[str]
        items: Annotated[list[str], operator.add]

    app = (
        StateGraph(Top)
        .add_node("joke", sub.compile(interrupt_before=["tell"]))
        .add_conditional_edges(START, lambda s: [Send("joke", {"subject": x}) for x in s["subjects"]])
        .compile(checkpointer=saver)
    )
    tracer = Collector()
    c = cfg()
    out = driver.invoke(app, {"subjects": ["a", "b"]}, {**c, "callbacks": [tracer]})
    assert out == {"subjects": ["a", "b"], "items": []}
    assert len(tracer.runs) == 1
