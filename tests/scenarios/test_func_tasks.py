"""Functional API, tasks: futures in parallel, async tasks, errors, retries, and interrupts in
entrypoints and tasks (with finished tasks not recomputed on resume).

Expected outputs were taken from LangGraph 1.2.22 run as an oracle (semantics §2.22, items
135-136).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.func import entrypoint, task
from stepgraph.types import Command, RetryPolicy, interrupt


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    """A fresh checkpointer of each kind."""
    if request.param == "memory":
        yield InMemorySaver()
    else:
        from stepgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "x.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


def cfg():
    """A config on a new, unique thread."""
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


def test_sync_tasks_run_in_parallel():
    """Two task futures sleeping 0.2 s each complete together in well under 0.4 s."""

    @task
    def slow(x: int) -> int:
        time.sleep(0.2)
        return x + 1

    @entrypoint()
    def par(xs: list) -> list:
        futures = [slow(x) for x in xs]
        return [f.result() for f in futures]

    start = time.perf_counter()
    assert par.invoke([1, 2]) == [2, 3]
    assert time.perf_counter() - start < 0.35


def test_async_tasks_awaited_in_async_entrypoint(driver):
    """Async tasks are awaitable futures; gathered they run concurrently and keep call order."""

    @task
    async def aslow(x: int) -> int:
        await asyncio.sleep(0.2)
        return x * 3

    @entrypoint()
    async def apar(xs: list) -> list:
        return list(await asyncio.gather(*[aslow(x) for x in xs]))

    start = time.perf_counter()
    if driver.is_async:
        assert driver.invoke(apar, [1, 2]) == [3, 6]
    else:
        assert asyncio.run(apar.ainvoke([1, 2])) == [3, 6]
    assert time.perf_counter() - start < 0.35


def test_sync_task_awaited_in_async_code():
    """A sync task (a function or a callable object) called from async code is awaitable,
    from the entrypoint and from inside an async task; its update is streamed."""

    @task
    def double(x: int) -> int:
        return x * 2

    class Inc:
        def __call__(self, x: int) -> int:
            return x + 1

    inc = task(Inc(), name="inc")

    @task
    async def via_async(x: int) -> int:
        return await double(x) + 100

    @entrypoint()
    async def wf(x: int) -> list:
        return [await double(x), await inc(x), await via_async(x)]

    async def run() -> list:
        return [c async for c in wf.astream(3, stream_mode="updates")]

    chunks = asyncio.run(run())
    assert chunks[-1] == {"wf": [6, 4, 106]}
    assert {"inc": 4} in chunks and {"via_async": 106} in chunks
    assert chunks.count({"double": 6}) == 2


def test_task_updates_stream_parallel(driver):
    """Each parallel task call streams its own {task: result} update before the entrypoint's."""

    @task
    def sq(x: int) -> int:
        return x * x

    @entrypoint()
    def wf(xs: list) -> list:
        return [f.result() for f in [sq(x) for x in xs]]

    chunks = driver.stream(wf, [2, 3])
    assert sorted(c["sq"] for c in chunks[:2]) == [4, 9]
    assert chunks[2:] == [{"wf": [4, 9]}]


@task
def boom(x: int) -> int:
    raise ValueError(f"bad {x}")


def test_task_exception_caught_from_result(driver):
    """An exception raised in a task is re-raised by .result() and can be caught."""

    @entrypoint()
    def catcher(x: int) -> str:
        try:
            return str(boom(x).result())
        except ValueError as exc:
            return f"caught {exc}"

    assert driver.invoke(catcher, 1) == "caught bad 1"


def test_task_exception_uncaught_propagates(driver):
    """An uncaught task exception ends the run with that exception."""

    @entrypoint()
    def wf(x: int) -> int:
        return boom(x).result()

    with pytest.raises(ValueError, match="bad 2"):
        driver.invoke(wf, 2)


def test_task_retry_policy(driver):
    """A task's retry_policy re-runs it on matching errors until it succeeds."""
    calls = []

    @task(retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
    def flaky(x: int) -> int:
        calls.append(x)
        if len(calls) < 3:
            raise ConnectionError("flaky")
        return x

    @entrypoint()
    def wf(x: int) -> int:
        return flaky(x).result()

    assert driver.invoke(wf, 7) == 7
    assert calls == [7, 7, 7]


def test_task_retry_policy_exhausted(driver):
    """When every attempt fails, the last error surfaces after max_attempts calls."""
    calls = []

    @task(retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False))
    def always(x: int) -> int:
        calls.append(x)
        raise ConnectionError(f"down {len(calls)}")

    @entrypoint()
    def wf(x: int) -> int:
        return always(x).result()

    with pytest.raises(ConnectionError, match="down 2"):
        driver.invoke(wf, 1)
    assert calls == [1, 1]


def test_interrupt_in_entrypoint_tasks_not_recomputed(driver, saver):
    """interrupt() in the entrypoint pauses; on resume finished tasks are replayed, not re-run."""
    calls = []

    @task
    def add1(x: int) -> int:
        calls.append(x)
        return x + 1

    @entrypoint(checkpointer=saver)
    def wf(x: int) -> list:
        a = add1(x).result()
        b = add1(a).result()
        return [a, b, interrupt(f"ok {b}?")]

    config = cfg()
    out = driver.invoke(wf, 1, config)
    assert list(out) == ["__interrupt__"]
    assert [i.value for i in out["__interrupt__"]] == ["ok 3?"]
    state = asyncio.run(wf.aget_state(config)) if driver.is_async else wf.get_state(config)
    assert state.next == ("wf",)
    assert driver.invoke(wf, Command(resume="yes"), config) == [2, 3, "yes"]
    assert calls == [1, 2]


def test_interrupt_in_async_entrypoint(saver):
    """An async entrypoint awaiting an async task interrupts and resumes; the task runs once."""
    calls = []

    @task
    async def aadd(x: int) -> int:
        calls.append(x)
        return x + 1

    @entrypoint(checkpointer=saver)
    async def wf(x: int) -> list:
        a = await aadd(x)
        return [a, interrupt("go?")]

    config = cfg()
    out = asyncio.run(wf.ainvoke(1, config))
    assert [i.value for i in out["__interrupt__"]] == ["go?"]
    assert asyncio.run(wf.ainvoke(Command(resume="y"), config)) == [2, "y"]
    assert calls == [1]


def test_interrupt_in_task_resumed_with_value(driver, saver):
    """interrupt() inside a task is resumed by a plain Command(resume=value)."""
    calls = []

    @task
    def ask(x: int) -> str:
        calls.append(x)
        return f"{x}:{interrupt(f'q{x}')}"

    @entrypoint(checkpointer=saver)
    def wf(x: int) -> str:
        return ask(x).result() + "!"

    config = cfg()
    out = driver.invoke(wf, 5, config)
    assert [i.value for i in out["__interrupt__"]] == ["q5"]
    assert driver.stream(wf, Command(resume="A"), config) == [{"ask": "5:A"}, {"wf": "5:A!"}]
    assert calls == [5, 5]


def test_interrupt_in_task_resumed_with_map(driver, saver):
    """interrupt() inside a task is resumed by a {interrupt_id: value} map; the task re-runs."""
    calls = []

    @task
    def ask(x: int) -> str:
        calls.append(x)
        return f"{x}:{interrupt(f'q{x}')}"

    @entrypoint(checkpointer=saver)
    def wf(x: int) -> str:
        return ask(x).result() + "!"

    config = cfg()
    (intr,) = driver.invoke(wf, 5, config)["__interrupt__"]
    assert intr.value == "q5"
    assert driver.stream(wf, Command(resume={intr.id: "A"}), config) == [
        {"ask": "5:A"},
        {"wf": "5:A!"},
    ]
    assert calls == [5, 5]


def test_interrupts_in_two_tasks_resumed_one_by_one(driver, saver):
    """With two interrupting tasks the first .result() surfaces one interrupt at a time."""
    calls = []

    @task
    def ask(x: int) -> str:
        calls.append(x)
        return f"{x}:{interrupt(f'q{x}')}"

    @entrypoint(checkpointer=saver)
    def wf(xs: list) -> list:
        futures = [ask(x) for x in xs]
        return [f.result() for f in futures]

    config = cfg()
    out = driver.invoke(wf, [1, 2], config)
    assert [i.value for i in out["__interrupt__"]] == ["q1"]
    assert sorted(calls) == [1, 2]
    out = driver.invoke(wf, Command(resume={i.id: "A" for i in out["__interrupt__"]}), config)
    assert [i.value for i in out["__interrupt__"]] == ["q2"]
    out = driver.invoke(wf, Command(resume={i.id: "B" for i in out["__interrupt__"]}), config)
    assert out == ["1:A", "2:B"]
    assert sorted(calls) == [1, 1, 2, 2, 2]  # task 1 is not re-run on the second resume


def test_task_timeout_is_enforced(driver):
    """An async task call that outlives its ``timeout`` fails its caller with
    ``NodeTimeoutError``; one that finishes in time returns its value."""
    from stepgraph.errors import NodeTimeoutError
    from stepgraph.types import TimeoutPolicy

    @task(timeout=TimeoutPolicy(run_timeout=0.05))
    async def slow(x: float) -> float:
        await asyncio.sleep(x)
        return x

    @entrypoint()
    async def wf(x: float) -> float:
        return await slow(x)

    def run(x: float) -> float:
        return driver.invoke(wf, x) if driver.is_async else asyncio.run(wf.ainvoke(x))

    with pytest.raises(NodeTimeoutError):
        run(0.5)
    assert run(0) == 0


def test_timeout_on_sync_task_or_entrypoint_is_refused():
    """A sync task or entrypoint cannot be timed out: declaring one with a timeout raises."""
    from stepgraph.types import TimeoutPolicy

    with pytest.raises(ValueError, match="Task 'sync_task' is sync"):

        @task(timeout=TimeoutPolicy(idle_timeout=0.05))
        def sync_task(x: int) -> int:
            return x

    with pytest.raises(ValueError, match="Node 'sync_wf' is sync"):

        @entrypoint(timeout=1.0)
        def sync_wf(x: int) -> int:
            return x

    with pytest.raises(ValueError, match="greater than 0"):
        task(timeout=0)


def test_task_updates_stream_while_the_entrypoint_runs(driver):
    """An entrypoint's stream yields each task's update as it finishes: the consumer sees
    the first update before the workflow goes on (it waits for the consumer's signal)."""
    import threading

    seen_first = threading.Event()
    waited = []

    @task
    def step(n: int) -> int:
        return n

    @entrypoint()
    def wf(x: int) -> int:
        step(1).result()
        waited.append(seen_first.wait(timeout=5))
        return step(2).result()

    if driver.is_async:

        async def consume():
            async for chunk in wf.astream(0):
                if chunk == {"step": 1}:
                    seen_first.set()

        asyncio.run(consume())
    else:
        for chunk in wf.stream(0):
            if chunk == {"step": 1}:
                seen_first.set()
    assert waited == [True]


def test_task_calls_in_the_tasks_stream(driver):
    """A task call is announced and finished in the ``tasks`` stream like a node: its input
    is ``(args, kwargs)``, its trigger the push channel, its result under ``__return__``."""

    @task
    def double(x: int) -> int:
        return x * 2

    @entrypoint()
    def wf(x: int) -> int:
        return double(x).result()

    parts = driver.stream(wf, 4, stream_mode="tasks")
    call = [p for p in parts if p["name"] == "double"]
    assert call[0]["input"] == ((4,), {}) and call[0]["triggers"] == ("__pregel_push",)
    assert call[1]["result"] == {"__return__": 8} and call[1]["error"] is None
    assert call[0]["id"] == call[1]["id"]
    assert [p["name"] for p in parts] == ["wf", "double", "double", "wf"]
