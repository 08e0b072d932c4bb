"""``engine.hop``: sync functions from async code on worker threads (what async runs use for
sync nodes)."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from stepgraph.engine import hop as hop_mod
from stepgraph.engine.hop import hop
from stepgraph.engine.pool import watch_threads

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("hop_test_var", default="unset")


def test_result_exception_and_thread() -> None:
    def work(a: int, b: int) -> tuple[int, str]:
        return a + b, threading.current_thread().name

    def fail() -> None:
        raise KeyError("boom")

    async def main() -> None:
        (total, name) = await hop(work, 2, 3)
        assert total == 5
        assert name != threading.current_thread().name
        assert name.startswith("stepgraph")
        with pytest.raises(KeyError, match="boom"):
            await hop(fail)

    asyncio.run(main())


def test_context_is_copied() -> None:
    def read_and_set() -> str:
        seen = VAR.get()
        VAR.set("changed in the thread")
        return seen

    async def main() -> None:
        VAR.set("caller")
        assert await hop(read_and_set) == "caller"
        assert VAR.get() == "caller"  # the function ran in a copy

    asyncio.run(main())


def test_idle_workers_are_reused() -> None:
    async def main() -> None:
        for i in range(50):
            assert await hop(int, str(i)) == i

    asyncio.run(main())
    before = len(hop_mod._crew._threads)
    asyncio.run(main())
    assert len(hop_mod._crew._threads) == before  # sequential jobs never need a new thread


def test_concurrent_jobs_run_at_once() -> None:
    n = 4
    barrier = threading.Barrier(n, timeout=60)

    def meet(i: int) -> int:
        barrier.wait()  # only returns when n jobs run at the same time
        return i

    async def main() -> list[int]:
        return list(await asyncio.gather(*(hop(meet, i) for i in range(n))))

    assert asyncio.run(main()) == list(range(n))


def test_cancelled_waiter_drops_the_result() -> None:
    started = threading.Event()
    release = threading.Event()
    finished = threading.Event()

    def slow() -> str:
        started.set()
        release.wait(60)
        finished.set()
        return "late"

    errors: list[dict] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _l, ctx: errors.append(ctx))
        task = asyncio.ensure_future(hop(slow))
        while not started.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        while not finished.is_set():
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)  # the worker's hand-over runs on a cancelled future

    asyncio.run(main())
    assert errors == []


def test_watched_jobs_go_through_the_pool() -> None:
    seen: list[int] = []
    release = threading.Event()

    def held() -> str:
        release.wait(60)
        return "ok"

    async def main() -> None:
        with watch_threads() as watch:
            task = asyncio.ensure_future(hop(held))
            await asyncio.sleep(0)
            seen.append(watch.running)
            release.set()
            assert await task == "ok"
            await asyncio.sleep(0)
            seen.append(watch.running)

    asyncio.run(main())
    assert seen == [1, 0]
