"""``RunLoop`` is sans-IO: its methods return effects, and only a driver performs them.

These tests drive a loop by hand, without a driver, and look at what it asks for.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from stepgraph.cache.memory import InMemoryCache
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine.effects import CacheGet, CacheSet, Emit, Save
from stepgraph.engine.loop import RunLoop
from stepgraph.engine.runner import run_task_sync
from stepgraph.graph import END, START, StateGraph
from stepgraph.stream.sink import StreamSink
from stepgraph.types import CachePolicy


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _fanout() -> Any:
    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge("a", END)
    g.add_edge("b", END)
    return g


def _loop(graph: Any, saver: Any, modes: frozenset[str] = frozenset(), **kw: Any) -> RunLoop:
    loop = RunLoop(
        graph, {"items": []}, {"configurable": {"thread_id": "t"}},
        sink=StreamSink(modes), output_keys=graph.output_channels,
        stream_keys=graph.stream_keys, checkpointer=saver, **kw,
    )
    loop.restore(None)
    return loop


def _run_start(loop: RunLoop) -> None:
    """The step of the hidden ``__start__`` node."""
    loop.tick()
    (start,) = loop.runnable  # type: ignore[misc]
    run_task_sync(start)
    loop.task_done(start)
    loop.after_tick()


def test_a_step_hands_over_its_writes_and_checkpoint_in_one_save() -> None:
    saver = InMemorySaver()
    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_edge(START, "a")
    loop = _loop(g.compile(checkpointer=saver), saver)
    first = loop.first()
    assert [type(e) for e in first] == [Save]
    assert [op[0] for op in first[0].ops] == ["put"]
    _run_start(loop)
    assert not loop.tick()
    (task,) = loop.runnable  # type: ignore[misc]
    run_task_sync(task)
    assert not loop.task_done(task)  # nothing to perform yet: queued for the step
    effects = loop.after_tick()
    assert [type(e) for e in effects] == [Save]
    assert [op[0] for op in effects[0].ops] == ["put_writes", "put"]
    assert list(saver.list(None)) == []  # the loop stored nothing itself


def test_tasks_of_a_parallel_step_hand_over_their_writes_as_they_finish() -> None:
    saver = InMemorySaver()
    loop = _loop(_fanout().compile(checkpointer=saver), saver)
    loop.first()
    _run_start(loop)
    loop.tick()
    tasks = loop.runnable
    assert tasks is not None and sorted(t.name for t in tasks) == ["a", "b"]
    for task in tasks:
        run_task_sync(task)
        (save,) = loop.task_done(task)
        assert isinstance(save, Save) and [op[0] for op in save.ops] == ["put_writes"]
        assert save.ops[0][3] == task.id
    (save,) = loop.after_tick()
    assert isinstance(save, Save) and [op[0] for op in save.ops] == ["put"]


def test_stream_parts_are_emit_effects() -> None:
    graph = _fanout().compile()
    loop = _loop(graph, None, frozenset({"updates", "values"}))
    assert not loop.first()
    _run_start(loop)
    loop.tick()
    task = loop.runnable[0]  # type: ignore[index]
    run_task_sync(task)
    (emit,) = loop.task_done(task)
    assert isinstance(emit, Emit) and emit.parts == [("updates", {task.name: {"items": [task.name]}})]
    assert not loop.sink.parts  # the loop never touches the sink
    run_task_sync(loop.runnable[1])  # type: ignore[index]
    loop.task_done(loop.runnable[1])  # type: ignore[index]
    (values,) = loop.after_tick()
    assert isinstance(values, Emit) and values.parts[0][0] == "values"


def test_cache_lookups_and_stores_are_effects() -> None:
    calls: list[str] = []

    def a(state: State) -> dict[str, Any]:
        calls.append("a")
        return {"items": ["a"]}

    g = StateGraph(State)
    g.add_node("a", a, cache_policy=CachePolicy())
    g.add_edge(START, "a")
    cache = InMemoryCache()
    graph = g.compile(cache=cache)
    loop = _loop(graph, None)
    loop.first()
    _run_start(loop)
    (get,) = loop.tick()
    assert isinstance(get, CacheGet) and get.cache is cache and loop.runnable is None
    assert not get.then({})  # a miss: the task runs
    (task,) = loop.runnable  # type: ignore[misc]
    run_task_sync(task)
    (store,) = loop.task_done(task)
    assert isinstance(store, CacheSet) and list(store.entries) == get.keys
    loop.after_tick()

    # A second run finds it: the task is done without running.
    again = _loop(graph, None, frozenset({"updates"}))
    again.first()
    _run_start(again)
    (get2,) = again.tick()
    more = get2.then({key: value for key, (value, _ttl) in store.entries.items()})
    assert [type(e) for e in more] == [Emit]  # the cached update, streamed as cached
    assert again.runnable == []
    assert calls == ["a"]
