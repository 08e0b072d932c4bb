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

Worker threads are started on demand and kept (an idle one is reused first); at
interpreter exit they are told to stop and joined, so a running job finishes, as with
``ThreadPoolExecutor``.
"""

from __future__ import annotations

import contextvars
import os
import threading
from _queue import SimpleQueue  # (the C type: `queue` itself costs an import of its own)
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepgraph.engine import pool

if TYPE_CHECKING:
    import asyncio

__all__ = ["hop"]

_jobs: SimpleQueue[Any] = SimpleQueue()
_lock = threading.Lock()
_idle = 0
"""Workers waiting for a job and not yet claimed by a submitter."""
_threads: list[threading.Thread] = []
_limit = 0


def _settle(fut: asyncio.Future[Any], value: Any, failed: bool) -> None:
    if fut.done():  # cancelled while the job ran
        return
    if failed:
        fut.set_exception(value)
    else:
        fut.set_result(value)


def _worker() -> None:
    global _idle
    get = _jobs.get
    while True:
        job = get()
        if job is None:
            return
        loop, fut, ctx, fn, args = job
        job = None
        if fut.cancelled():  # (a racy read is harmless: _settle checks again)
            with _lock:
                _idle += 1
        else:
            try:
                value, failed = ctx.run(fn, *args), False
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                value, failed = exc, True
            # Idle before the result is handed over: the awaiting task's next job must find
            # this worker free, not start a thread of its own.
            with _lock:
                _idle += 1
            try:
                loop.call_soon_threadsafe(_settle, fut, value, failed)
            except RuntimeError:  # the event loop is closed: nobody waits any more
                pass
            value = None
        loop = fut = ctx = fn = args = None


async def hop(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a worker thread, in a copy of the current context; its result."""
    global _idle, _limit
    import asyncio  # (loaded by then: the caller is a coroutine; this module loads without it)

    if pool.watching():
        return await asyncio.wrap_future(pool.submit(contextvars.copy_context().run, fn, *args))
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    start = False
    with _lock:
        if _idle:
            _idle -= 1
        else:
            if not _limit:
                _limit = pool.max_threads()
            if len(_threads) < _limit:
                start = True
                thread = threading.Thread(
                    target=_worker, name=f"stepgraph-hop-{len(_threads)}", daemon=True
                )
                _threads.append(thread)
    _jobs.put((loop, fut, contextvars.copy_context(), fn, args))
    if start:
        thread.start()
    return await fut


def _stop() -> None:
    """At interpreter exit: workers finish their job and stop."""
    with _lock:
        threads = list(_threads)
    for _ in threads:
        _jobs.put(None)
    for thread in threads:
        if thread.is_alive():
            thread.join()


def _after_fork() -> None:
    global _jobs, _lock, _idle, _threads
    _jobs = SimpleQueue()
    _lock = threading.Lock()
    _idle = 0
    _threads = []


_register = getattr(threading, "_register_atexit", None)
if _register is not None:  # (before threading joins non-daemon threads, as executors do)
    _register(_stop)
os.register_at_fork(after_in_child=_after_fork)
