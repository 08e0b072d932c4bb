"""``engine.driver_thread``: an ``ainvoke`` whose work is all sync runs the sync driver on one
worker thread. It must do what the async driver does: results, checkpoints, errors,
interrupts, contextvars, and where a cancelled run stops."""

from __future__ import annotations

import asyncio
import contextvars
import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

from stepgraph.cache.memory import InMemoryCache
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.config import get_stream_writer
from stepgraph.engine.driver_thread import runs_on_thread
from stepgraph.engine.pool import watch_threads
from stepgraph.errors import NodeCancelledError
from stepgraph.graph import END, START, StateGraph
from stepgraph.pregel._run import prepare
from stepgraph.types import CachePolicy, Command, interrupt

HANG_GUARD = 60.0
"""Only guards against a hang (a broken run would wait forever); never a timing assertion."""

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("driver_thread_var", default="unset")


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _node(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"items": [name]}

    return node


def _chain(*nodes: tuple[str, Any]) -> StateGraph:
    g = StateGraph(State)
    prev = START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, END)
    return g


def _on_thread(graph: Any, **kwargs: Any) -> bool:
    run = prepare(
        graph, {"items": []}, {"configurable": {"thread_id": "x"}}, stream_mode=None, **kwargs
    )
    return runs_on_thread(run.loop)


def _wait(event: threading.Event) -> Any:
    return asyncio.get_running_loop().run_in_executor(None, event.wait, HANG_GUARD)


# -- which runs ------------------------------------------------------------------------------


def test_a_sync_graph_with_the_memory_saver_runs_on_one_thread() -> None:
    g = _chain(("a", _node("a")), ("b", _node("b")))
    assert _on_thread(g.compile())
    assert _on_thread(g.compile(checkpointer=InMemorySaver()))


def test_what_needs_the_event_loop_keeps_the_async_driver() -> None:
    async def anode(state: State) -> dict[str, Any]:
        return {"items": ["x"]}

    async def aroute(state: State) -> str:
        return END

    assert not _on_thread(_chain(("a", _node("a")), ("b", anode)).compile())
    routed = _chain(("a", _node("a")))
    routed.add_conditional_edges("a", aroute)
    assert not _on_thread(routed.compile())
    sub = _chain(("s", _node("s"))).compile()
    assert not _on_thread(_chain(("a", _node("a")), ("sub", sub)).compile())  # runs ainvoke

    class OwnAsyncCache(InMemoryCache):
        async def aget(self, keys: Any) -> Any:
            return self.get(keys)

    cached = StateGraph(State)
    cached.add_node("a", _node("a"), cache_policy=CachePolicy())
    cached.add_edge(START, "a")
    assert _on_thread(cached.compile(cache=InMemoryCache()))
    assert not _on_thread(cached.compile(cache=OwnAsyncCache()))
    plain = _chain(("a", _node("a")))
    assert not _on_thread(plain.compile(), print_mode="custom")  # parts wanted while it runs
    slow = plain.compile()
    slow.step_timeout = 5.0
    assert not _on_thread(slow)


def test_a_saver_with_its_own_async_methods_keeps_the_async_driver() -> None:
    class OwnAsync(InMemorySaver):
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return self.put(config, checkpoint, metadata, new_versions)

    class OwnSync(InMemorySaver):  # its aput calls this put: still the same calls
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return super().put(config, checkpoint, metadata, new_versions)

    g = _chain(("a", _node("a")))
    assert not _on_thread(g.compile(checkpointer=OwnAsync()))
    assert _on_thread(g.compile(checkpointer=OwnSync()))


def test_the_check_is_remembered_per_graph_and_redone_when_its_nodes_change() -> None:
    async def anode(state: State) -> dict[str, Any]:
        return {"items": ["x"]}

    graph = _chain(("a", _node("a")), ("b", _node("b"))).compile()
    assert _on_thread(graph)
    assert _on_thread(graph)  # (remembered: the same node objects)
    other = _chain(("a", _node("a")), ("b", anode)).compile()
    graph.nodes["b"] = other.nodes["b"]  # a node swapped in after a run: checked again
    assert not _on_thread(graph)
    graph.nodes["c"] = graph.nodes.pop("b")
    assert not _on_thread(graph)


# -- what a run does -------------------------------------------------------------------------


def _fanout() -> StateGraph:
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, _node(name))
    g.add_node("d", _node("d"))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", END)
    return g


def _history(graph: Any, config: Any) -> list[Any]:
    return [
        (s.values, s.next, s.metadata["step"], s.metadata["source"], [t.name for t in s.tasks])
        for s in graph.get_state_history(config)
    ]


def test_results_and_checkpoints_are_those_of_invoke() -> None:
    graph = _fanout().compile(checkpointer=InMemorySaver())
    assert _on_thread(graph)
    sync_cfg = {"configurable": {"thread_id": "sync"}}
    async_cfg = {"configurable": {"thread_id": "async"}}
    expected = graph.invoke({"items": []}, sync_cfg)
    assert asyncio.run(graph.ainvoke({"items": []}, async_cfg)) == expected
    assert expected == {"items": ["a", "b", "c", "d"]}
    assert _history(graph, async_cfg) == _history(graph, sync_cfg)


def test_a_cached_node_is_looked_up_and_stored_as_in_invoke() -> None:
    calls: list[str] = []

    def counted(state: State) -> dict[str, Any]:
        calls.append("a")
        return {"items": ["a"]}

    g = StateGraph(State)
    g.add_node("a", counted, cache_policy=CachePolicy())
    g.add_edge(START, "a")
    graph = g.compile(cache=InMemoryCache())
    assert _on_thread(graph)
    assert asyncio.run(graph.ainvoke({"items": []})) == {"items": ["a"]}
    assert asyncio.run(graph.ainvoke({"items": []})) == {"items": ["a"]}  # a hit
    assert graph.invoke({"items": []}) == {"items": ["a"]}  # the same cache entry
    assert calls == ["a"]


def test_nodes_run_off_the_event_loop_in_a_copy_of_the_callers_context() -> None:
    seen: list[Any] = []

    def probe(name: str) -> Any:
        def node(state: State) -> dict[str, Any]:
            try:
                asyncio.get_running_loop()
                running = True
            except RuntimeError:
                running = False
            seen.append((name, VAR.get(), threading.get_ident(), running))
            VAR.set(f"set by {name}")  # stays in this task's copy
            return {"items": [name]}

        return node

    g = StateGraph(State)
    for name in ("a", "b", "c", "d"):
        g.add_node(name, probe(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")  # b and c: a step of two tasks, on the pool and the run's thread
    g.add_edge(["b", "c"], "d")
    graph = g.compile()

    async def main() -> int:
        VAR.set("caller")
        await graph.ainvoke({"items": []})
        assert VAR.get() == "caller"
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert sorted(name for name, *_ in seen) == ["a", "b", "c", "d"]
    for _name, value, ident, running in seen:
        assert value == "caller"
        assert ident != loop_thread
        assert not running


def test_printed_parts_are_those_of_invoke(capsys: pytest.CaptureFixture[str]) -> None:
    def writes(state: State) -> dict[str, Any]:
        get_stream_writer()({"custom": "dropped: not a printed mode"})
        return {"items": ["w"]}

    graph = _chain(("a", _node("a")), ("w", writes), ("z", _node("z"))).compile()
    modes = ["updates", "values"]
    assert _on_thread(graph, print_mode=modes)
    graph.invoke({"items": []}, print_mode=modes)
    printed = capsys.readouterr().out
    asyncio.run(graph.ainvoke({"items": []}, print_mode=modes))
    assert capsys.readouterr().out == printed
    assert "[updates]" in printed and "[values]" in printed and "dropped" not in printed


def test_a_failing_task_raises_and_its_finished_siblings_are_stored() -> None:
    def bad(state: State) -> dict[str, Any]:
        raise ValueError("bad")

    g = StateGraph(State)
    g.add_node("ok", _node("ok"))
    g.add_node("bad", bad)
    g.add_edge(START, "ok")
    g.add_edge(START, "bad")
    graph = g.compile(checkpointer=InMemorySaver())
    assert _on_thread(graph)
    config = {"configurable": {"thread_id": "f"}}
    with pytest.raises(ValueError, match="bad") as info:
        asyncio.run(graph.ainvoke({"items": []}, config))
    assert any("During task with name 'bad'" in n for n in getattr(info.value, "__notes__", []))
    state = graph.get_state(config)
    assert state.next == ("bad",)
    assert sorted((t.name, t.error is not None) for t in state.tasks) == [
        ("bad", True),
        ("ok", False),
    ]


@pytest.mark.parametrize("stream_mode", ["values", "updates"])  # one thread; the async driver
def test_a_node_raising_cancelled_error_itself_fails_as_cancelled(stream_mode: str) -> None:
    def bad(state: State) -> dict[str, Any]:
        raise asyncio.CancelledError

    graph = _chain(("a", _node("a")), ("bad", bad)).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "nc"}}
    with pytest.raises(NodeCancelledError):
        asyncio.run(graph.ainvoke({"items": []}, config, stream_mode=stream_mode))
    state = graph.get_state(config)
    assert (state.values, state.next) == ({"items": ["a"]}, ("bad",))
    assert [t.error is not None for t in state.tasks] == [True]


def test_interrupt_and_resume() -> None:
    def ask(state: State) -> dict[str, Any]:
        return {"items": [interrupt("name?")]}

    graph = _chain(("a", _node("a")), ("ask", ask), ("z", _node("z"))).compile(
        checkpointer=InMemorySaver()
    )
    assert _on_thread(graph)
    config = {"configurable": {"thread_id": "i"}}
    first = asyncio.run(graph.ainvoke({"items": []}, config))
    assert first["items"] == ["a"]
    assert [i.value for i in first["__interrupt__"]] == ["name?"]
    assert asyncio.run(graph.ainvoke(Command(resume="bo"), config)) == {"items": ["a", "bo", "z"]}


# -- cancellation ----------------------------------------------------------------------------


@pytest.mark.parametrize("stream_mode", ["values", "updates"])  # one thread; the async driver
def test_cancelled_while_a_task_runs_stops_at_once_and_drops_the_task(stream_mode: str) -> None:
    started, release, returned = threading.Event(), threading.Event(), threading.Event()
    after: list[str] = []

    def slow(state: State) -> dict[str, Any]:
        started.set()
        release.wait(HANG_GUARD)
        returned.set()
        return {"items": ["slow"]}

    def last(state: State) -> dict[str, Any]:
        after.append("z")
        return {"items": ["z"]}

    graph = _chain(("a", _node("a")), ("slow", slow), ("z", last)).compile(
        checkpointer=InMemorySaver()
    )
    assert _on_thread(graph)
    config = {"configurable": {"thread_id": "c"}}

    async def main() -> None:
        with watch_threads() as watch:
            run = asyncio.ensure_future(
                graph.ainvoke({"items": []}, config, stream_mode=stream_mode)
            )
        await _wait(started)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert not returned.is_set()  # the caller did not wait for the running task
        state = graph.get_state(config)
        assert (state.values, state.next) == ({"items": ["a"]}, ("slow",))
        release.set()
        await asyncio.wait_for(watch.settled(), HANG_GUARD)  # the run's thread has returned

    asyncio.run(main())
    assert after == []
    state = graph.get_state(config)
    assert (state.values, state.next) == ({"items": ["a"]}, ("slow",))
    assert graph.invoke(None, config) == {"items": ["a", "slow", "z"]}  # resumes there


def _cancel_in_a_step_of_two(stream_mode: str) -> Any:
    """Cancel the run while one task of a step of two runs; what is stored afterwards."""
    started, release = threading.Event(), threading.Event()

    def slow(state: State) -> dict[str, Any]:
        started.set()
        release.wait(HANG_GUARD)
        return {"items": ["slow"]}

    g = StateGraph(State)
    g.add_node("fast", _node("fast"))
    g.add_node("slow", slow)
    g.add_node("z", _node("z"))
    g.add_edge(START, "fast")
    g.add_edge(START, "slow")
    g.add_edge(["fast", "slow"], "z")
    graph = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "p"}}

    async def main() -> None:
        run = asyncio.ensure_future(graph.ainvoke({"items": []}, config, stream_mode=stream_mode))
        await _wait(started)
        run.cancel()
        await asyncio.sleep(0)
        release.set()  # the step's sync tasks are waited for
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(run, HANG_GUARD)

    asyncio.run(main())
    assert _on_thread(graph)
    state = graph.get_state(config)
    return graph, config, (state.values, state.next, [(t.name, t.result) for t in state.tasks])


def test_cancelled_during_a_step_of_several_tasks_stores_what_the_async_driver_does() -> None:
    graph, config, on_thread = _cancel_in_a_step_of_two("values")  # one worker thread
    _, _, in_async_driver = _cancel_in_a_step_of_two("updates")  # (astream: the async driver)
    assert on_thread == in_async_driver
    assert on_thread[0] == {"items": ["fast", "slow"]}  # both tasks finished: their step is kept
    assert graph.invoke(None, config) == {"items": ["fast", "slow", "z"]}


class _Recording(InMemorySaver):
    """Records its sync calls, which its (inherited) async methods make too."""

    def __init__(self, inline: bool) -> None:
        super().__init__()
        self.inline_writes = inline
        self.log: list[Any] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.log.append(("put", metadata["step"]))
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        self.log.append(("put_writes", tuple(c for c, _ in writes)))
        super().put_writes(config, writes, task_id, task_path)


@pytest.mark.parametrize("inline", [True, False])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_saves_are_those_of_invoke(durability: str, inline: bool) -> None:
    logs = []
    for run in ("invoke", "ainvoke"):
        saver = _Recording(inline)
        graph = _fanout().compile(checkpointer=saver)
        assert _on_thread(graph)
        config = {"configurable": {"thread_id": "d"}}
        if run == "invoke":
            graph.invoke({"items": []}, config, durability=durability)
        else:
            asyncio.run(graph.ainvoke({"items": []}, config, durability=durability))
        logs.append(sorted(map(repr, saver.log)))
    assert logs[0] == logs[1]
    if durability == "exit":
        assert logs[0] == [repr(("put", 3))]  # built and written once, at the end


def test_a_child_ainvoke_in_an_async_node_streams_into_its_parent() -> None:
    child = _chain(("c1", _node("c1")), ("c2", _node("c2"))).compile()
    run = prepare(child, {"items": []}, None, stream_mode=None)
    assert runs_on_thread(run.loop)

    async def parent_node(state: State) -> dict[str, Any]:
        return {"items": (await child.ainvoke({"items": []}))["items"]}

    parent = _chain(("p", parent_node), ("q", _node("q"))).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "n"}}

    async def main() -> list[Any]:
        return [
            (tuple(x.split(":")[0] for x in ns), mode, payload)
            async for ns, mode, payload in parent.astream(
                {"items": []}, config, subgraphs=True, stream_mode=["updates", "values"]
            )
        ]

    assert asyncio.run(main()) == [
        ((), "values", {"items": []}),
        (("p",), "values", {"items": []}),
        (("p",), "updates", {"c1": {"items": ["c1"]}}),
        (("p",), "values", {"items": ["c1"]}),
        (("p",), "updates", {"c2": {"items": ["c2"]}}),
        (("p",), "values", {"items": ["c1", "c2"]}),
        ((), "updates", {"p": {"items": ["c1", "c2"]}}),
        ((), "values", {"items": ["c1", "c2"]}),
        ((), "updates", {"q": {"items": ["q"]}}),
        ((), "values", {"items": ["c1", "c2", "q"]}),
    ]
    assert parent.get_state(config).values == {"items": ["c1", "c2", "q"]}
