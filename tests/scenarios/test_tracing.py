"""Runs reported to langchain tracers: one root run per call, one child run per node attempt
(and per functional-API task call), models and subgraphs nested under the node that called
them, and ``TracePolicy`` changing only what tracers record.

Written once for both drivers. Needs langchain-core (skipped without it).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any
from uuid import UUID

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.tracers.base import BaseTracer  # noqa: E402

from stepgraph.func import entrypoint, task  # noqa: E402
from stepgraph.graph import START, StateGraph  # noqa: E402
from stepgraph.types import TracePolicy, omit_payload  # noqa: E402


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


class S(TypedDict):
    value: int
    log: Annotated[list[str], operator.add]


def _graph(**node_kwargs: Any) -> Any:
    def n(state: S) -> dict:
        return {"value": state["value"] + 1, "log": ["n"]}

    return StateGraph(S).add_node("n", n, **node_kwargs).add_edge(START, "n").compile()


def test_one_root_run_with_a_child_per_node(driver) -> None:
    tracer = Recorder()
    out = driver.invoke(_graph(), {"value": 1, "log": []}, {"callbacks": [tracer]})
    assert out == {"value": 2, "log": ["n"]}
    [root] = tracer.roots
    assert root.name == "LangGraph" and root.inputs == {"value": 1, "log": []}
    assert root.outputs == {"value": 2, "log": ["n"]}
    [node] = root.child_runs
    assert node.name == "n" and node.parent_run_id == root.id
    assert node.inputs == {"value": 1, "log": []}
    assert node.outputs == {"value": 2, "log": ["n"]}
    assert node.extra["metadata"]["langgraph_node"] == "n"
    assert "graph:step:1" in node.tags


def test_run_name_and_tags_reach_the_root_run(driver) -> None:
    tracer = Recorder()
    driver.invoke(_graph(), {"value": 1, "log": []},
                  {"callbacks": [tracer], "run_name": "mine", "tags": ["t1"]})
    [root] = tracer.roots
    assert root.name == "mine" and "t1" in root.tags
    assert "t1" in root.child_runs[0].tags


def test_a_failing_node_is_an_errored_run(driver) -> None:
    def boom(state: S) -> dict:
        raise ValueError("nope")

    app = StateGraph(S).add_node("boom", boom).add_edge(START, "boom").compile()
    tracer = Recorder()
    with pytest.raises(ValueError):
        driver.invoke(app, {"value": 1, "log": []}, {"callbacks": [tracer]})
    [root] = tracer.roots
    assert "nope" in root.error and "nope" in root.child_runs[0].error


def test_models_and_subgraphs_nest_under_their_node(driver) -> None:
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


def test_config_run_id_names_the_root_run(driver) -> None:
    tracer = Recorder()
    run_id = UUID(int=42)
    driver.invoke(_graph(), {"value": 1, "log": []}, {"callbacks": [tracer], "run_id": run_id})
    assert tracer.roots[0].id == run_id


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
