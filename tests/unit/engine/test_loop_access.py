"""``LoopAccess``: what code outside a run's steps asks of its loop, instead of writing its
fields (``tests/unit/core/test_run_state.py`` checks that nothing else writes them)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine.apply import WriteSource
from stepgraph.engine.loop import RunLoop
from stepgraph.engine.runner import run_task_sync
from stepgraph.engine.tracing import RunTracer
from stepgraph.graph import START, StateGraph
from stepgraph.runtime import RunControl
from stepgraph.stream.sink import StreamSink


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph(saver: Any = None) -> Any:
    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


def _loop(graph: Any, saver: Any = None, **kw: Any) -> RunLoop:
    loop = RunLoop(
        graph, {"items": []}, {"configurable": {"thread_id": "t"}},
        sink=StreamSink(frozenset()), output_keys=graph.output_channels,
        stream_keys=graph.stream_keys, checkpointer=saver, **kw,
    )
    loop.restore(None)
    return loop


def test_parent_task_and_tracer_are_constructor_arguments() -> None:
    graph = _graph()
    loop = _loop(graph)
    assert loop.parent_task is None and loop.tracer is None
    traced = _loop(graph, traced=True)
    assert isinstance(traced.tracer, RunTracer) and traced.tracer.loop is traced
    marker: Any = object()
    assert _loop(graph, parent_task=marker).parent_task is marker


def test_run_control_is_made_once_or_is_the_one_given() -> None:
    graph = _graph()
    loop = _loop(graph)
    assert loop.control is None
    made = loop.run_control()
    assert isinstance(made, RunControl) and loop.run_control() is made and loop.control is made
    given = RunControl()
    assert _loop(graph, control=given).run_control() is given


def test_a_helper_is_made_once_per_run() -> None:
    graph = _graph()
    loop, other = _loop(graph), _loop(graph)
    made: list[RunLoop] = []

    def make(run: RunLoop) -> object:
        made.append(run)
        return object()

    first = loop.helper("events", make)
    assert loop.helper("events", make) is first
    assert other.helper("events", make) is not first
    assert made == [loop, other]


def test_plan_next_leaves_the_loop_at_its_step() -> None:
    graph = _graph()
    loop = _loop(graph)
    loop.first()
    step = loop.step
    assert list(loop.plan_next()) and loop.step == step
    names = [t.name for t in loop.plan_next().values()]
    loop.tick()
    (start,) = loop.runnable  # type: ignore[misc]
    assert names == [start.name] == ["__start__"]
    run_task_sync(start)
    loop.task_done(start)
    loop.after_tick()
    assert [t.name for t in loop.plan_next().values()] == ["a"] and loop.step == step + 1


def test_apply_mark_records_the_update() -> None:
    graph = _graph()
    loop = _loop(graph)
    loop.first()
    updated = loop.apply([WriteSource("__input__", [("items", ["x"])])], mark=True)
    assert loop.updated is updated and updated == {"items"}
    loop.apply([WriteSource("__input__", [("items", ["y"])])])
    assert loop.updated is updated  # unmarked: the last update stays


def test_update_checkpoint_stores_even_without_a_checkpointer() -> None:
    graph = _graph()
    loop = _loop(graph)  # no saver: nothing would be stored in a run
    loop.first()
    before = loop.checkpoint_id
    ops = loop.update_checkpoint("update", loop.step)
    puts = [op for op in ops if op[0] == "put"]
    assert len(puts) == 1 and puts[0][2]["id"] == loop.checkpoint_id != before
    assert loop.checkpoint_metadata["source"] == "update" and loop.checkpoint_ts


def test_checkpoint_time_and_metadata_follow_the_checkpoints() -> None:
    saver = InMemorySaver()
    graph = _graph(saver)
    loop = _loop(graph, saver)
    assert loop.checkpoint_ts == "" and loop.checkpoint_metadata == {}
    loop.first()
    assert loop.checkpoint_metadata["source"] == "input" and loop.checkpoint_ts
    graph.invoke({"items": []}, {"configurable": {"thread_id": "t"}})
    saved = saver.get_tuple({"configurable": {"thread_id": "t"}})
    restored = _loop(graph, saver)
    restored.restore(saved)
    assert restored.checkpoint_ts == saved.checkpoint["ts"]
    assert restored.checkpoint_metadata == saved.metadata
