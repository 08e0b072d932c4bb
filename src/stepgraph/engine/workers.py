"""Long-lived worker threads: the sync driver's step helpers and ``hop``'s workers.

``Crew.start(fn)`` runs ``fn()`` on a worker thread: a job goes on one ``SimpleQueue``
read by threads that are started on demand and kept (an idle one is reused first), up to
``pool.max_threads()``; more jobs wait in the queue until a worker is free, as with a
``ThreadPoolExecutor``, without its per-job future, work item and semaphore. ``fn``
catches its own errors (an escaping one is reported by ``threading.excepthook`` and the
worker goes on).

At interpreter exit the workers are told to stop and joined, so a running job finishes
(as ``ThreadPoolExecutor`` does); a forked child starts with no workers.
"""

from __future__ import annotations

import os
import sys
import threading
from _queue import SimpleQueue  # (the C type: `queue` itself costs an import of its own)
from collections.abc import Callable
from typing import Any

from stepgraph.engine import pool

__all__ = ["Crew", "step_crew"]

_register_atexit = getattr(threading, "_register_atexit", None)


class Crew:
    """Worker threads taking jobs (``fn()``) from one queue."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._reset()
        if _register_atexit is not None:  # (before threading joins non-daemon threads)
            _register_atexit(self.stop)
        os.register_at_fork(after_in_child=self._reset)  # a forked child starts with none

    def _reset(self) -> None:
        self._jobs: SimpleQueue[Callable[[], Any] | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._free = 0
        """Workers waiting for a job that no ``start`` has claimed yet."""
        self._backlog = 0
        """Jobs queued while every worker was busy and no more could be started."""
        self._threads: list[threading.Thread] = []

    def start(self, fn: Callable[[], Callable[[], object] | None]) -> Ticket:
        """Run ``fn()`` on a worker thread (a free one, a new one, or the next one free).

        What ``fn`` returns, if not ``None``, is called once the worker counts as free again
        (a hand-off of the result: the next job of whoever it wakes reuses this worker).
        The ticket returned can ``revoke`` the job while no worker has taken it."""
        thread = None
        with self._lock:
            if self._free:
                self._free -= 1
                backlog = False
            elif len(self._threads) < pool.max_threads():
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                backlog = False
            else:
                self._backlog += 1
                backlog = True
        ticket: Ticket = [fn, backlog]
        self._jobs.put(ticket)
        if thread is not None:
            thread.start()
        return ticket

    def revoke(self, ticket: Ticket) -> bool:
        """Drop a job no worker has taken yet (True), else do nothing (False).

        A job whose work is already done elsewhere (a step whose caller ran every task
        before the helper it started got the GIL) would otherwise keep its worker counted
        busy until that worker runs it, and the next step would start one more thread. The
        ticket stays queued; the worker that takes it goes back to waiting."""
        with self._lock:
            if ticket[0] is None:
                return False
            ticket[0] = None
            if ticket[1] and self._backlog:
                self._backlog -= 1  # (a backlog job no finishing worker has claimed yet)
            else:
                # The worker counted for it (or one that finished since and claimed the
                # backlog) is free again: whichever takes the ticket skips it.
                self._free += 1
            return True

    def _work(self) -> None:
        get = self._jobs.get
        lock = self._lock
        while True:
            ticket = get()
            if ticket is None:
                return
            with lock:
                fn, ticket[0] = ticket[0], None  # (taken: ``revoke`` leaves it alone)
            if fn is None:
                continue  # revoked: counted free (or not owed) already
            then = None
            try:
                then = fn()
            except BaseException:  # noqa: BLE001 - a job handles its errors; keep the worker
                _report()
            fn = None
            with lock:
                if self._backlog:
                    self._backlog -= 1  # a queued job is this worker's next one
                else:
                    self._free += 1
            if then is not None:
                # (after this worker counts as free: whoever ``then`` wakes finds it so)
                try:
                    then()
                except BaseException:  # noqa: BLE001
                    _report()
                then = None

    def stop(self) -> None:
        """Tell every worker to stop once its job is done, and wait for them."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._jobs.put(None)
        for thread in threads:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join()


Ticket = list[Any]
"""``[the job, or None once taken or revoked, whether it was queued as backlog]``."""


def _report() -> None:
    threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), None)))


step_crew = Crew("stepgraph-step")
"""The helpers of the sync driver's steps of several tasks (``driver_sync._run_step``)."""
