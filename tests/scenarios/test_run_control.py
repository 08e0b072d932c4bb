"""Draining a run with ``RunControl``, and what ``Runtime`` tells a node about its run.

A drain stops the run at the next step boundary with that step checkpointed; the call raises
``GraphDrained`` and ``invoke(None, config)`` continues (a drained subgraph continues from
its own checkpoint). Each scenario runs on both drivers; the durable ones on every saver.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.errors import GraphDrained
from stepgraph.graph import START, StateGraph
from stepgraph.runtime import ExecutionInfo, RunControl, Runtime


class S(TypedDict, total=False):
    a: str
    b: str
    c: str


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def _chain(calls: list[str], drain_in: str | None = None, control: RunControl | None = None,
           checkpointer: Any = None) -> Any:
    def make(name: str) -> Any:
        def node(state: S, runtime: Runtime) -> S:
            calls.append(name)
            if name == drain_in:
                (control or runtime.control).request_drain("sigterm")
            return {name: "done"}

        return node

    g = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, make(name))
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c")
    return g.compile(checkpointer=checkpointer)


def test_drain_stops_before_the_next_step(driver) -> None:
    calls: list[str] = []
    with pytest.raises(GraphDrained, match="sigterm") as exc:
        driver.invoke(_chain(calls, drain_in="a"), {})
    assert exc.value.reason == "sigterm"
    assert calls == ["a"]


def test_drain_in_the_last_step_finishes_normally(driver) -> None:
    calls: list[str] = []
    control = RunControl()
    assert driver.invoke(_chain(calls, drain_in="c", control=control), {}, control=control) == {
        "a": "done", "b": "done", "c": "done",
    }
    assert control.drain_requested


def test_pre_drained_control_runs_nothing(driver) -> None:
    calls: list[str] = []
    control = RunControl()
    control.request_drain("maintenance")
    with pytest.raises(GraphDrained, match="maintenance"):
        driver.invoke(_chain(calls), {}, control=control)
    assert calls == []
    with pytest.raises(GraphDrained):
        driver.stream(_chain(calls), {}, control=control)
    assert calls == []


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_drained_run_resumes_where_it_stopped(driver, saver, durability) -> None:
    calls: list[str] = []
    app = _chain(calls, drain_in="a", checkpointer=saver)
    config = cfg()
    with pytest.raises(GraphDrained):
        driver.invoke(app, {}, config, durability=durability)
    assert app.get_state(config).next == ("b",)
    calls.clear()
    app = _chain(calls, checkpointer=saver)
    assert driver.invoke(app, None, config, durability=durability) == {
        "a": "done", "b": "done", "c": "done",
    }
    assert calls == ["b", "c"]


@pytest.mark.parametrize("child_checkpointer", [None, True])
def test_drained_subgraph_continues_when_the_parent_resumes(driver, saver, child_checkpointer) -> None:
    calls: list[str] = []
    child = _chain(calls, drain_in="a", checkpointer=child_checkpointer)
    parent = (
        StateGraph(S).add_node("child", child).add_edge(START, "child").compile(checkpointer=saver)
    )
    config = cfg()
    with pytest.raises(GraphDrained, match="sigterm"):
        driver.invoke(parent, {}, config)
    assert parent.get_state(config).next == ("child",)
    assert driver.invoke(parent, None, config) == {"a": "done", "b": "done", "c": "done"}
    assert calls == ["a", "b", "c"]  # "a" is not run again


def test_drain_from_another_thread(driver) -> None:
    started = threading.Event()
    control = RunControl()

    def slow(state: S) -> S:
        started.set()
        time.sleep(0.05)
        return {"a": "done"}

    app = (StateGraph(S).add_node("a", slow).add_node("b", lambda s: {"b": "no"})
           .add_edge(START, "a").add_edge("a", "b").compile())
    threading.Thread(target=lambda: (started.wait(5), control.request_drain("ext"))).start()
    with pytest.raises(GraphDrained, match="ext"):
        driver.invoke(app, {}, control=control)


def test_runtime_describes_the_attempt_and_the_server(driver, saver) -> None:
    seen: list[Any] = []

    def node(state: S, runtime: Runtime) -> S:
        seen.append((runtime.execution_info, runtime.server_info, runtime.control))
        if runtime.execution_info.node_attempt == 1:
            raise ValueError("once")
        return {"a": "done"}

    from stepgraph.types import RetryPolicy

    app = (StateGraph(S).add_node("a", node, retry_policy=RetryPolicy(
        initial_interval=0.0, jitter=False, retry_on=ValueError))
           .add_edge(START, "a").compile(checkpointer=saver))
    config = cfg()
    user = type("User", (), {"identity": "me"})()  # a BaseUser-like object
    config["configurable"].update(assistant_id="asst", graph_id="g", langgraph_auth_user=user)
    driver.invoke(app, {}, config)
    (first, server, control), (second, _, control2) = seen
    assert isinstance(first, ExecutionInfo)
    assert first.thread_id == config["configurable"]["thread_id"]
    assert first.checkpoint_ns.startswith("a:") and first.task_id in first.checkpoint_ns
    assert (first.node_attempt, second.node_attempt) == (1, 2)
    assert isinstance(first.node_first_attempt_time, float)
    assert second.node_first_attempt_time == first.node_first_attempt_time
    assert (server.assistant_id, server.graph_id, server.user) == ("asst", "g", user)
    assert isinstance(control, RunControl) and control is control2


def test_server_info_absent_outside_a_server(driver) -> None:
    seen: list[Any] = []
    app = StateGraph(S).add_node("a", lambda s, runtime: seen.append(runtime.server_info) or {}) \
        .add_edge(START, "a").compile()
    driver.invoke(app, {})
    assert seen == [None]


async def test_cancel_while_draining_cancels_the_running_node() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow(state: S) -> S:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"a": "done"}

    control = RunControl()
    app = StateGraph(S).add_node("a", slow).add_edge(START, "a").compile()
    run = asyncio.ensure_future(app.ainvoke({}, control=control))
    await started.wait()
    control.request_drain()
    await asyncio.sleep(0.05)
    assert not run.done()  # a drain waits for running nodes
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert cancelled.is_set()
