"""One long-lived thread pool for running sync nodes in parallel (no pool per invoke).

A thread cannot be interrupted: a cancelled async run whose sync node is still running on
the pool has not really stopped. ``watch_threads()`` lets a caller (the server's executor)
learn which pool jobs a run submitted, so it can wait until they returned before it
declares the run stopped.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["ThreadWatch", "max_threads", "shared_pool", "submit", "watch_threads", "watching"]

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def shared_pool() -> ThreadPoolExecutor:
    """The process-wide pool, created on first use (threads are started lazily)."""
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                from concurrent.futures import (
                    ThreadPoolExecutor,  # loaded by the first parallel step
                )

                _POOL = ThreadPoolExecutor(max_workers=max_threads(), thread_name_prefix="stepgraph")
    return _POOL


def max_threads() -> int:
    """How many threads the pool (and ``engine.hop``'s workers) may run at once."""
    return int(os.environ.get("STEPGRAPH_MAX_THREADS", "0")) or min(64, (os.cpu_count() or 1) * 4 + 8)


class ThreadWatch:
    """The pool jobs submitted under one ``watch_threads()`` that have not returned yet."""

    def __init__(self) -> None:
        self._running: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def add(self, fut: Future[Any]) -> None:
        with self._lock:
            self._running.add(fut)
        fut.add_done_callback(self._discard)

    def _discard(self, fut: Future[Any]) -> None:
        with self._lock:
            self._running.discard(fut)

    @property
    def running(self) -> int:
        """How many watched jobs are still running (or queued)."""
        with self._lock:
            return len(self._running)

    async def settled(self) -> None:
        """Wait until every watched job has returned (jobs still queued are cancelled)."""
        import asyncio

        while True:
            with self._lock:
                futures = list(self._running)
            if not futures:
                return
            for fut in futures:
                fut.cancel()  # only succeeds for a job no thread took yet
            await asyncio.wait([asyncio.wrap_future(f) for f in futures])


_WATCH: contextvars.ContextVar[ThreadWatch | None] = contextvars.ContextVar("stepgraph_thread_watch",
                                                                              default=None)


@contextlib.contextmanager
def watch_threads() -> Iterator[ThreadWatch]:
    """Record the pool jobs submitted (by ``submit``) in this context and the tasks it starts."""
    watch = ThreadWatch()
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


def watching() -> bool:
    """Whether a ``watch_threads()`` records the jobs submitted in this context."""
    return _WATCH.get() is not None


def submit(fn: Callable[..., Any], *args: Any) -> Future[Any]:
    """``shared_pool().submit(fn, *args)``, recorded by the current ``watch_threads()``."""
    fut = shared_pool().submit(fn, *args)
    watch = _WATCH.get()
    if watch is not None:
        watch.add(fut)
    return fut
