"""``stepgraph.runtime``: ``ExecutionInfo``, ``ServerInfo``, ``RunControl`` and ``Runtime`` values."""

from __future__ import annotations

import dataclasses

import pytest

from stepgraph.runtime import DEFAULT_RUNTIME, ExecutionInfo, RunControl, Runtime, ServerInfo


def test_execution_info_patch_returns_a_copy() -> None:
    info = ExecutionInfo(checkpoint_id="c", checkpoint_ns="n:1", task_id="1")
    patched = info.patch(node_attempt=2, thread_id="t")
    assert (patched.node_attempt, patched.thread_id, patched.task_id) == (2, "t", "1")
    assert info.node_attempt == 1 and info.thread_id is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.task_id = "x"  # type: ignore[misc]


def test_run_control() -> None:
    control = RunControl()
    assert not control.drain_requested and control.drain_reason is None
    control.request_drain()
    assert control.drain_requested and control.drain_reason == "shutdown"
    control.request_drain("sigterm")
    assert control.drain_reason == "sigterm"


def test_merge_keeps_what_the_other_lacks() -> None:
    control, server = RunControl(), ServerInfo(assistant_id="a", graph_id="g")
    base = Runtime(context={"k": 1}, control=control, server_info=server)
    merged = base.merge(Runtime())
    assert merged.control is control and merged.server_info is server
    assert merged.context == {"k": 1}
    other = ServerInfo(assistant_id="b", graph_id="g")
    assert base.merge(Runtime(server_info=other)).server_info is other
    beats: list[int] = []
    with_beat = Runtime(heartbeat=lambda: beats.append(1))
    Runtime().merge(with_beat).heartbeat()
    assert beats == [1]


def test_runtime_drain_properties_and_patch() -> None:
    control = RunControl()
    rt = Runtime(control=control)
    assert not rt.drain_requested
    control.request_drain("bye")
    assert rt.drain_requested and rt.drain_reason == "bye"
    assert Runtime().drain_reason is None
    assert rt.patch_execution_info(task_id="z").execution_info.task_id == "z"


def test_default_runtime_does_nothing() -> None:
    DEFAULT_RUNTIME.heartbeat()
    DEFAULT_RUNTIME.stream_writer("ignored")
    assert DEFAULT_RUNTIME.control is None and DEFAULT_RUNTIME.server_info is None


def test_idempotency_key_is_stable_across_a_retried_step() -> None:
    from typing import TypedDict

    from stepgraph.checkpoint.memory import InMemorySaver
    from stepgraph.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    keys: list[str] = []

    def step(state: S, runtime: Runtime) -> dict[str, int]:
        keys.append(runtime.execution_info.idempotency_key)
        if state["n"] == 1 and len(keys) == 2:
            raise RuntimeError("the step fails once")
        return {"n": state["n"] + 1}

    builder = StateGraph(S)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: END if s["n"] >= 3 else "step")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t-key"}}
    with pytest.raises(RuntimeError):
        graph.invoke({"n": 0}, config)
    graph.invoke(None, config)  # resumes the failed step from its checkpoint
    assert len(keys) == 4 and keys[1] == keys[2]  # the retried step kept its key
    assert len(set(keys)) == 3
    checkpoints = {c.config["configurable"]["checkpoint_id"] for c in graph.checkpointer.list(config)}
    for key in keys:
        thread, checkpoint, task = key.split(":")
        assert thread == "t-key" and checkpoint in checkpoints and task
    assert ExecutionInfo(task_id="x").idempotency_key == "::x"
