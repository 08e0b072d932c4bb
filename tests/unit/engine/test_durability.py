"""One durability policy for both drivers (``engine/durability.py``), observed through
savers that record their calls: the order of events, never timing."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.func import entrypoint, task
from stepgraph.graph import END, START, StateGraph
from stepgraph.types import RetryPolicy

HANG_GUARD = 60.0
"""Only guards against a hang (a broken run would wait forever); never a timing assertion."""


class State(TypedDict):
    items: Annotated[list[str], operator.add]


class RecordingSaver(InMemorySaver):
    """An in-memory saver that is not written inline, recording each call it gets."""

    inline_writes = False

    def __init__(self) -> None:
        super().__init__()
        self.log: list[Any] = []
        self.lock = threading.Lock()

    def _note(self, *entry: Any) -> None:
        with self.lock:
            self.log.append(entry)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self._note("put", metadata["step"])
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        self._note("put_writes", tuple(c for c, _ in writes))
        super().put_writes(config, writes, task_id, task_path)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        self.put_writes(config, writes, task_id, task_path)

    def puts(self) -> list[int]:
        return [e[1] for e in self.log if e[0] == "put"]


class GatedSaver(RecordingSaver):
    """``aput`` of the step-0 checkpoint waits until a node of the next step opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if metadata["step"] == 0:
            self._note("put-start", 0)
            self.started.set()
            await self.gate.wait()
        return self.put(config, checkpoint, metadata, new_versions)


def _chain(a: Any, b: Any) -> Any:
    g = StateGraph(State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g


def test_async_durability_writes_in_the_background_in_async_runs() -> None:
    saver = GatedSaver()

    async def a(state: State) -> dict[str, Any]:
        saver._note("node", "a")
        return {"items": ["a"]}

    async def b(state: State) -> dict[str, Any]:
        # Runs while the checkpoint after "a" is being stored: it waits for that write to
        # start, then lets it finish. An inline write would never get here (a hang).
        await saver.started.wait()
        saver._note("node", "b")
        saver.gate.set()
        return {"items": ["b"]}

    graph = _chain(a, b).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "bg"}}

    async def run() -> Any:
        return await asyncio.wait_for(graph.ainvoke({"items": []}, config, durability="async"), HANG_GUARD)

    assert asyncio.run(run()) == {"items": ["a", "b"]}
    assert saver.log.index(("put-start", 0)) < saver.log.index(("node", "b")) < saver.log.index(("put", 0))
    assert saver.puts() == [-1, 0, 1, 2]  # every checkpoint stored, in order, before ainvoke returned
    assert graph.get_state(config).values == {"items": ["a", "b"]}


def test_sync_durability_writes_before_the_next_step_in_async_runs() -> None:
    saver = RecordingSaver()

    async def a(state: State) -> dict[str, Any]:
        return {"items": ["a"]}

    async def b(state: State) -> dict[str, Any]:
        saver._note("node", "b")
        return {"items": ["b"]}

    graph = _chain(a, b).compile(checkpointer=saver)
    asyncio.run(graph.ainvoke({"items": []}, {"configurable": {"thread_id": "s"}}, durability="sync"))
    assert saver.log.index(("put", 0)) < saver.log.index(("node", "b"))


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_exit_durability_writes_once(driver: str) -> None:
    saver = RecordingSaver()
    graph = _chain(lambda s: {"items": ["a"]}, lambda s: {"items": ["b"]}).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"exit-{driver}"}}
    if driver == "sync":
        graph.invoke({"items": []}, config, durability="exit")
    else:
        asyncio.run(graph.ainvoke({"items": []}, config, durability="exit"))
    assert saver.puts() == [2]
    assert [e[0] for e in saver.log] == ["put"]
    assert graph.get_state(config).values == {"items": ["a", "b"]}


def _failing_fanout(saver: Any, driver: str) -> Any:
    async def aok(state: State) -> dict[str, Any]:
        return {"items": ["ok"]}

    async def abad(state: State) -> dict[str, Any]:
        for _ in range(3):  # "ok" finishes first
            await asyncio.sleep(0)
        raise ValueError("bad")

    def bad(state: State) -> dict[str, Any]:
        raise ValueError("bad")

    g = StateGraph(State)
    g.add_node("ok", aok if driver == "async" else (lambda s: {"items": ["ok"]}))
    g.add_node("bad", abad if driver == "async" else bad)
    g.add_edge(START, "ok")
    g.add_edge(START, "bad")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_flush_on_error_is_the_same_in_both_drivers(durability: str) -> None:
    stored = {}
    for driver in ("sync", "async"):
        saver = RecordingSaver()
        graph = _failing_fanout(saver, driver)
        config = {"configurable": {"thread_id": "f"}}
        with pytest.raises(ValueError, match="bad"):
            if driver == "sync":
                graph.invoke({"items": []}, config, durability=durability)
            else:
                asyncio.run(graph.ainvoke({"items": []}, config, durability=durability))
        state = graph.get_state(config)
        stored[driver] = (
            sorted(map(repr, saver.log)),
            state.next,
            sorted((t.name, t.error is not None) for t in state.tasks),
        )
    assert stored["sync"] == stored["async"]
    log, next_, tasks = stored["sync"]
    assert repr(("put_writes", ("items",))) in log and repr(("put_writes", ("__error__",))) in log
    assert next_ == ("bad",)  # "ok" finished: its writes were stored
    assert tasks == [("bad", True), ("ok", False)]


def test_async_retry_waits_for_pending_task_calls() -> None:
    log: list[str] = []
    release = threading.Event()

    @task
    def slow() -> str:
        release.wait(HANG_GUARD)
        log.append("call finished")
        return "x"

    attempts = []

    @entrypoint(retry_policy=RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ValueError))
    def main(inp: str) -> str:
        attempts.append(len(log))
        if len(attempts) == 1:
            slow()  # left running: the attempt fails before reading it
            try:
                raise ValueError("first attempt fails")
            finally:
                release.set()
        return "done"

    assert asyncio.run(main.ainvoke("go")) == "done"
    # The second attempt started only once the first attempt's call had finished.
    assert attempts == [0, 1] and log == ["call finished"]


def test_a_node_stopped_by_keyboard_interrupt_stays_pending() -> None:
    """Only a node that finished (or failed) is recorded: one stopped by ``KeyboardInterrupt``
    runs again when the thread resumes."""
    runs: list[str] = []

    def a(state: State) -> dict[str, Any]:
        runs.append("a")
        if len(runs) == 1:
            raise KeyboardInterrupt
        return {"items": ["a"]}

    saver = InMemorySaver()
    graph = _chain(a, lambda s: {"items": ["b"]}).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "kb"}}
    with pytest.raises(KeyboardInterrupt):
        graph.invoke({"items": []}, config)
    assert graph.get_state(config).next == ("a",)
    assert graph.invoke(None, config) == {"items": ["a", "b"]}
    assert runs == ["a", "a"]


class _GatedSaver:
    """A saver whose ``put`` waits for ``release`` (so saves queue up behind it)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.stored: list[int] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> None:
        assert self.release.wait(HANG_GUARD)
        if checkpoint == "bad":
            raise RuntimeError("saver failed")
        self.stored.append(checkpoint)


def _background_writer(saver: Any) -> Any:
    from types import SimpleNamespace

    from stepgraph.engine.durability import SyncWriter

    return SyncWriter(SimpleNamespace(checkpointer=saver, durability="async"))  # type: ignore[arg-type]


def test_sync_writer_wait_returns_once_every_queued_save_is_stored_in_order() -> None:
    saver = _GatedSaver()
    writer = _background_writer(saver)
    assert writer.background
    for n in range(5):
        writer.submit([("put", {}, n, {}, {})])
    waiter = threading.Thread(target=writer.wait)
    waiter.start()
    saver.release.set()
    waiter.join(HANG_GUARD)
    assert not waiter.is_alive()
    assert saver.stored == [0, 1, 2, 3, 4]
    assert writer.pending == 0


def test_sync_writer_wait_raises_the_first_saver_failure_once_all_are_done() -> None:
    saver = _GatedSaver()
    writer = _background_writer(saver)
    writer.submit([("put", {}, 1, {}, {})])
    writer.submit([("put", {}, "bad", {}, {})])
    writer.submit([("put", {}, 3, {}, {})])  # (not stored: the run's saves stop at a failure)
    saver.release.set()
    with pytest.raises(RuntimeError, match="saver failed"):
        writer.wait()
    assert saver.stored == [1]
    assert writer.pending == 0


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_exit_durability_stores_only_the_writes_after_the_last_checkpoint(driver: str) -> None:
    """A run that pauses under ``durability="exit"`` stores its last checkpoint and the
    writes of the tasks that finished after it, naming that checkpoint; the writes of the
    steps before it are not stored, and resuming goes on from them."""
    from stepgraph.types import Command, interrupt

    def ask(state: State) -> dict[str, Any]:
        return {"items": [interrupt("which?")]}

    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_node("ask", ask)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "ask")
    saver = RecordingSaver()
    graph = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"pause-{driver}"}}
    if driver == "sync":
        graph.invoke({"items": []}, config, durability="exit")
    else:
        asyncio.run(graph.ainvoke({"items": []}, config, durability="exit"))
    assert saver.puts() == [1]
    assert sorted(e for e in saver.log if e[0] == "put_writes") == [
        ("put_writes", ("__interrupt__",)),
        ("put_writes", ("items",)),
    ]
    stored = saver.get_tuple(config)
    assert stored is not None
    assert {w[1] for w in stored.pending_writes} == {"items", "__interrupt__"}
    state = graph.get_state(config)
    assert state.values == {"items": ["a", "b"]} and state.next == ("ask",)
    done = graph.invoke(Command(resume="x"), config, durability="exit")
    assert done == {"items": ["a", "x", "b"]}  # a step applies its writes in task order
