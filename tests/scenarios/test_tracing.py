"""Runs reported to langchain callbacks: one root run per call, one child run per node attempt
(and per functional-API task call), models, runnables and subgraphs nested under the node
that called them, LangSmith run trees inside nodes, and ``TracePolicy`` changing only what
tracers record.

Written once for both drivers (and every saver where a run pauses). Needs langchain-core
(skipped without it). Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any
from unittest.mock import patch
from uuid import UUID

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.tracers.base import BaseTracer  # noqa: E402

from stepgraph.func import entrypoint, task  # noqa: E402
from stepgraph.graph import END, START, StateGraph  # noqa: E402
from stepgraph.types import Send, TracePolicy, omit_payload  # noqa: E402


class Recorder(BaseTracer):
    """Keeps every finished root run (with its child runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        self.roots.append(run)

    def all_runs(self) -> list[Any]:
        out, todo = [], list(self.roots)
        while todo:
            run = todo.pop(0)
            out.append(run)
            todo.extend(run.child_runs)
        return out

    def named(self, name: str) -> list[Any]:
        return [r for r in self.all_runs() if r.name == name]


class Inputs(BaseCallbackHandler):
    """A plain (non-tracer) handler: records what chain runs start with."""

    def __init__(self) -> None:
        self.starts: dict[str, Any] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.starts[kwargs.get("name")] = inputs


def _tree(run: Any) -> tuple[Any, ...]:
    """A run as ``(name, its graph:step tags, child trees)``."""
    tags = tuple(t for t in run.tags or () if t.startswith("graph:step"))
    return (run.name, tags, tuple(_tree(c) for c in run.child_runs))


class S(TypedDict):
    value: int
    log: Annotated[list[str], operator.add]


def _graph(**node_kwargs: Any) -> Any:
    def n(state: S) -> dict:
        return {"value": state["value"] + 1, "log": ["n"]}

    return StateGraph(S).add_node("n", n, **node_kwargs).add_edge(START, "n").compile()


def _chain(*names: str, **compile_kw: Any) -> Any:
    g = StateGraph(S)
    prev = START
    for name in names:
        g.add_node(name, lambda s, name=name: {"log": [name]})
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, END)
    return g.compile(**compile_kw)


def test_one_root_run_with_a_child_per_node(driver) -> None:
    tracer = Recorder()
    out = driver.invoke(_graph(), {"value": 1, "log": []}, {"callbacks": [tracer]})
    assert out == {"value": 2, "log": ["n"]}
    [root] = tracer.roots
    assert root.name == "LangGraph" and root.inputs == {"value": 1, "log": []}
    assert root.outputs == {"value": 2, "log": ["n"]}
    assert root.extra["metadata"]["ls_integration"] == "langgraph"
    [node] = root.child_runs
    assert node.name == "n" and node.parent_run_id == root.id
    assert node.inputs == {"value": 1, "log": []}
    assert node.outputs == {"value": 2, "log": ["n"]}
    assert node.extra["metadata"]["langgraph_node"] == "n"
    assert "graph:step:1" in node.tags


def test_each_step_tags_its_node_runs(driver) -> None:
    tracer = Recorder()
    out = driver.invoke(_chain("a", "b"), {"value": 0, "log": []}, {"callbacks": [tracer]})
    assert out == {"value": 0, "log": ["a", "b"]}
    [root] = tracer.roots
    assert _tree(root) == ("LangGraph", (), (("a", ("graph:step:1",), ()), ("b", ("graph:step:2",), ())))


def test_run_name_and_tags_reach_the_root_run(driver) -> None:
    tracer = Recorder()
    driver.invoke(_graph(), {"value": 1, "log": []},
                  {"callbacks": [tracer], "run_name": "mine", "tags": ["t1"]})
    [root] = tracer.roots
    assert root.name == "mine" and "t1" in root.tags
    assert root.child_runs[0].name == "n"  # the run name is the graph's, not its nodes'
    assert "t1" in root.child_runs[0].tags


def test_config_run_id_names_the_root_run(driver) -> None:
    tracer = Recorder()
    run_id = UUID(int=42)
    driver.invoke(_graph(), {"value": 1, "log": []}, {"callbacks": [tracer], "run_id": run_id})
    assert tracer.roots[0].id == run_id


def test_a_failing_node_is_an_errored_run(driver) -> None:
    def boom(state: S) -> dict:
        raise ValueError("nope")

    app = StateGraph(S).add_node("boom", boom).add_edge(START, "boom").compile()
    tracer = Recorder()
    with pytest.raises(ValueError):
        driver.invoke(app, {"value": 1, "log": []}, {"callbacks": [tracer]})
    [root] = tracer.roots
    assert "nope" in root.error and "nope" in root.child_runs[0].error


def test_subgraph_run_nests_under_its_node(driver) -> None:
    outer = StateGraph(S).add_node("sub", _chain("x")).add_edge(START, "sub").compile()
    tracer = Recorder()
    driver.invoke(outer, {"value": 0, "log": []}, {"callbacks": [tracer]})
    [root] = tracer.roots
    assert _tree(root) == (
        "LangGraph", (),
        (("sub", ("graph:step:1",), (("LangGraph", (), (("x", ("graph:step:1",), ()),)),)),),
    )


def test_models_nest_under_their_node_inside_a_subgraph(driver) -> None:
    model = FakeListChatModel(responses=["hi"])

    def ask(state: S) -> dict:
        model.invoke("hello")  # no config passed: the node's config is the ambient one
        return {"log": ["ask"]}

    child = StateGraph(S).add_node("ask", ask).add_edge(START, "ask").compile()
    parent = StateGraph(S).add_node("child", child).add_edge(START, "child").compile()
    tracer = Recorder()
    driver.invoke(parent, {"value": 0, "log": []}, {"callbacks": [tracer]})
    [root] = tracer.roots
    [child_node] = root.child_runs
    assert child_node.name == "child"
    [child_graph] = child_node.child_runs
    [ask_node] = child_graph.child_runs
    assert ask_node.name == "ask"
    assert [r.run_type for r in ask_node.child_runs] == ["llm"]


def test_node_run_is_the_parent_of_what_it_calls_with_its_config(driver) -> None:
    from langchain_core.runnables import RunnableLambda

    helper = RunnableLambda(lambda x: x, name="helper")
    app = (
        StateGraph(S)
        .add_node("n", lambda s, config: helper.invoke({"log": ["h"]}, config))
        .add_edge(START, "n")
        .compile()
    )
    tracer = Recorder()
    driver.invoke(app, {"value": 0, "log": []}, {"callbacks": [tracer]})
    [root] = tracer.roots
    assert _tree(root) == ("LangGraph", (), (("n", ("graph:step:1",), (("helper", (), ()),)),))


def test_langsmith_run_tree_inside_a_node(driver) -> None:
    import langsmith
    from langsmith import get_current_run_tree

    class St(TypedDict):
        run_id: Any

    app = (
        StateGraph(St)
        .add_node("n", lambda s: {"run_id": get_current_run_tree().id})
        .add_edge(START, "n")
        .compile()
    )
    with patch("langsmith.client.Client", spec=langsmith.Client) as client, patch(
        "langchain_core.tracers.langchain.get_client"
    ) as get_client:
        get_client.return_value = client
        with langsmith.tracing_context(enabled=True):
            out = driver.invoke(app, {"run_id": None})
    assert out["run_id"] is not None


def test_task_calls_nest_under_the_entrypoint(driver) -> None:
    if driver.is_async:

        @task
        async def double(x: int) -> int:
            return 2 * x

        @entrypoint()
        async def wf(xs: list[int]) -> list[int]:
            return [await double(x) for x in xs]
    else:

        @task
        def double(x: int) -> int:
            return 2 * x

        @entrypoint()
        def wf(xs: list[int]) -> list[int]:
            return [double(x).result() for x in xs]

    tracer = Recorder()
    assert driver.invoke(wf, [1, 2], {"callbacks": [tracer]}) == [2, 4]
    [root] = tracer.roots
    [node] = root.child_runs
    assert node.name == "wf"
    calls = [r for r in node.child_runs if r.name == "double"]
    assert sorted(r.inputs["input"] for r in calls) == [1, 2]
    assert sorted(r.outputs["output"] for r in calls) == [2, 4]


def test_trace_policy_changes_only_what_tracers_record(driver) -> None:
    seen: list[Any] = []

    def summary(value: Any) -> Any:
        seen.append(value)
        return {"summary": True}

    tracer, plain = Recorder(), Inputs()
    app = _graph(trace_policy=TracePolicy(process_inputs=summary, process_outputs=omit_payload))
    out = driver.invoke(app, {"value": 1, "log": []}, {"callbacks": [tracer, plain]})
    assert out == {"value": 2, "log": ["n"]}
    [node] = tracer.named("n")
    assert node.inputs == {"summary": True} and node.outputs == {}
    assert plain.starts["n"] == {"value": 1, "log": []}
    assert seen == [{"value": 1, "log": []}]
    assert tracer.roots[0].inputs == {"value": 1, "log": []}  # the root run is not affected


def test_a_failing_trace_processor_records_the_real_value(driver) -> None:
    def broken(value: Any) -> Any:
        raise RuntimeError("processor failed")

    tracer = Recorder()
    app = _graph(trace_policy=TracePolicy(process_inputs=broken, process_outputs=broken))
    assert driver.invoke(app, {"value": 1, "log": []}, {"callbacks": [tracer]})["value"] == 2
    [node] = tracer.named("n")
    assert node.inputs == {"value": 1, "log": []}
    assert node.outputs == {"value": 2, "log": ["n"]}
    assert driver.invoke(app, {"value": 1, "log": []})["value"] == 2  # untraced: untouched


def test_no_callbacks_no_runs(driver) -> None:
    tracer = Recorder()
    driver.invoke(_chain("a"), {"value": 0, "log": []})
    assert tracer.roots == []


def test_callbacks_bound_with_with_config_survive_stream_events() -> None:
    import asyncio

    started: list[str] = []

    class Track(BaseCallbackHandler):
        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            started.append(kwargs.get("name"))

    app = _graph().with_config({"callbacks": [Track()]})

    async def consume() -> None:
        async for _ in app.astream_events({"value": 1, "log": []}, version="v2"):
            pass

    asyncio.run(consume())
    assert started[:2] == ["LangGraph", "n"]


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def test_paused_subgraphs_still_give_one_root_run(driver, saver) -> None:
    class Joke(TypedDict):
        subject: str

    class Out(TypedDict):
        log: Annotated[list[str], operator.add]

    sub = StateGraph(Joke, output_schema=Out)
    sub.add_node("edit", lambda s: {"subject": s["subject"] + "!"})
    sub.add_node("tell", lambda s: {"log": [s["subject"]]})
    sub.add_edge(START, "edit")
    sub.add_edge("edit", "tell")

    class Top(TypedDict):
        subjects: list[str]
        log: Annotated[list[str], operator.add]

    app = (
        StateGraph(Top)
        .add_node("joke", sub.compile(interrupt_before=["tell"]))
        .add_conditional_edges(START, lambda s: [Send("joke", {"subject": x}) for x in s["subjects"]])
        .compile(checkpointer=saver)
    )
    tracer = Recorder()
    out = driver.invoke(app, {"subjects": ["a", "b"]}, {**cfg(), "callbacks": [tracer]})
    assert out == {"subjects": ["a", "b"], "log": []}
    assert len(tracer.roots) == 1
