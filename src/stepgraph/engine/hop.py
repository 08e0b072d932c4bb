"""Running a sync function from async code on a worker thread, cheaply.

An async run calls a sync node on a thread, as LangGraph does (the event loop is never
blocked by user code). ``hop(fn, *args)`` does what ``asyncio.wrap_future(pool.submit(
ctx.run, fn, *args))`` does, for about half the CPU: a job goes on one ``SimpleQueue``
read by long-lived worker threads, and the worker hands the result straight to the
waiting asyncio future with ``call_soon_threadsafe`` (no ``concurrent.futures`` future, no
executor locks or semaphores, no chained callbacks). The work is the same:

* the function runs in a copy of the caller's context (contextvars);
* a job whose awaiting task was cancelled before a worker took it never runs; one that is
  running finishes on its thread and its result is dropped (threads cannot be cancelled);
* at most ``shared_pool``'s number of workers run at once; more jobs wait in the queue;
* inside ``pool.watch_threads()`` (the server's executor, which waits for a cancelled run's
  threads) a job goes through ``pool.submit`` instead, so the watch sees it.

The workers are a ``workers.Crew`` of their own (not the sync driver's step helpers, so
a step waiting for its helpers never waits behind hops): started on demand and kept (an
idle one is reused first, and a worker counts as idle before it hands its result over, so
the awaiting task's next job reuses it); at interpreter exit they are told to stop and
joined, so a running job finishes, as with ``ThreadPoolExecutor``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepgraph.engine import pool
from stepgraph.engine.workers import Crew

if TYPE_CHECKING:
    import asyncio

__all__ = ["hop", "hop_future"]

_crew = Crew("stepgraph-hop")


def _settle(fut: asyncio.Future[Any], value: Any, failed: bool) -> None:
    if fut.done():  # cancelled while the job ran
        return
    if failed:
        fut.set_exception(value)
    else:
        fut.set_result(value)


def _job(
    loop: asyncio.AbstractEventLoop,
    fut: asyncio.Future[Any],
    ctx: contextvars.Context,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
) -> Callable[[], None] | None:
    """Runs ``fn`` (unless its waiter is gone) and returns the hand-off of its result."""
    if fut.cancelled():  # (a racy read is harmless: _settle checks again)
        return None
    try:
        value, failed = ctx.run(fn, *args), False
    except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
        value, failed = exc, True

    def hand_over() -> None:
        try:
            loop.call_soon_threadsafe(_settle, fut, value, failed)
        except RuntimeError:  # the event loop is closed: nobody waits any more
            pass

    return hand_over


async def hop(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a worker thread, in a copy of the current context; its result."""
    return await hop_future(fn, *args)


def hop_future(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """``hop`` started now, as a future of its result (no task of its own: a caller that
    only awaits it, or shields it, saves a task and two turns of the event loop).
    Cancelling the future before a worker took the job up means it never runs."""
    import asyncio  # (loaded by then: the caller is on the event loop; this module loads without)

    if pool.watching():
        return asyncio.wrap_future(pool.submit(contextvars.copy_context().run, fn, *args))
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    ctx = contextvars.copy_context()
    _crew.start(lambda: _job(loop, fut, ctx, fn, args))
    return fut
