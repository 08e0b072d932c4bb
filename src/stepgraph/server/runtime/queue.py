"""The run queue: one run at a time per thread, many threads at once.

``RunQueue`` is the interface (a Postgres/Redis queue shared by several server processes
can implement it); ``LocalRunQueue`` runs every job as an asyncio task of this process,
at most ``n_jobs`` at once, in submission order per thread. A job's task belongs to the
server, not to the request that created it, so a client that disconnects does not stop
its run.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.runtime.eventlog import RunLog

__all__ = ["LocalRunQueue", "RunJob", "RunQueue"]


@dataclass(eq=False)
class RunJob:
    """A run the server executes: its record, its event log and its outcome."""

    run: dict[str, Any]
    log: RunLog
    temporary: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    started: bool = False
    cancel_action: str | None = None
    status: str = "pending"
    result: Any = None

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    @property
    def thread_id(self) -> str:
        return self.run["thread_id"]


Executor = Callable[[RunJob], Awaitable[None]]


class RunQueue(ABC):
    """Accepts jobs and runs them; cancels and awaits them by run id."""

    @abstractmethod
    def submit(self, job: RunJob) -> None:
        """Queue ``job`` behind the thread's earlier jobs."""

    @abstractmethod
    def job(self, run_id: str) -> RunJob | None:
        """A queued, running or recently finished job."""

    @abstractmethod
    def active(self, thread_id: str | None = None) -> list[RunJob]:
        """Pending and running jobs (of one thread, or all), oldest first."""

    @abstractmethod
    def cancel(self, job: RunJob, action: str) -> None:
        """Stop ``job`` (``action`` is ``interrupt`` or ``rollback``)."""

    @abstractmethod
    def subscribe(self, thread_id: str) -> asyncio.Queue[RunJob]:
        """A queue that receives every job submitted on ``thread_id`` from now on."""

    @abstractmethod
    def unsubscribe(self, thread_id: str, queue: asyncio.Queue[RunJob]) -> None:
        """Stop feeding a queue returned by ``subscribe``."""

    @abstractmethod
    async def shutdown(self) -> None:
        """Cancel every job and wait for them."""


class LocalRunQueue(RunQueue):
    """Jobs as asyncio tasks of this process."""

    def __init__(self, execute: Executor, on_cancel_pending: Executor, n_jobs: int = 10,
                 keep_finished: int = 1000) -> None:
        self._execute = execute
        self._on_cancel_pending = on_cancel_pending
        self._slots = asyncio.Semaphore(max(1, n_jobs))
        self._threads: dict[str, deque[RunJob]] = {}
        self._jobs: dict[str, RunJob] = {}
        self._finished: OrderedDict[str, RunJob] = OrderedDict()
        self._keep = keep_finished
        self._closing = False
        self._watchers: dict[str, set[asyncio.Queue[RunJob]]] = {}

    def subscribe(self, thread_id: str) -> asyncio.Queue[RunJob]:
        queue: asyncio.Queue[RunJob] = asyncio.Queue()
        self._watchers.setdefault(thread_id, set()).add(queue)
        return queue

    def unsubscribe(self, thread_id: str, queue: asyncio.Queue[RunJob]) -> None:
        watchers = self._watchers.get(thread_id)
        if watchers is not None:
            watchers.discard(queue)
            if not watchers:
                self._watchers.pop(thread_id, None)

    def submit(self, job: RunJob) -> None:
        for queue in self._watchers.get(job.thread_id, ()):
            queue.put_nowait(job)
        self._jobs[job.run_id] = job
        line = self._threads.setdefault(job.thread_id, deque())
        line.append(job)
        if len(line) == 1:
            self._start(job)

    def _start(self, job: RunJob) -> None:
        job.task = asyncio.get_running_loop().create_task(self._run(job), name=f"run-{job.run_id}")

    async def _run(self, job: RunJob) -> None:
        try:
            async with self._slots:
                job.started = True
                await self._execute(job)
        except asyncio.CancelledError:
            if not job.started:
                await self._on_cancel_pending(job)
        finally:
            job.done.set()
            self._retire(job)

    def _retire(self, job: RunJob) -> None:
        self._jobs.pop(job.run_id, None)
        self._finished[job.run_id] = job
        while len(self._finished) > self._keep:
            self._finished.popitem(last=False)
        line = self._threads.get(job.thread_id)
        if line is not None:
            with contextlib.suppress(ValueError):
                line.remove(job)
            if not line:
                self._threads.pop(job.thread_id, None)
            elif line[0].task is None and not self._closing:
                self._start(line[0])

    def job(self, run_id: str) -> RunJob | None:
        return self._jobs.get(run_id) or self._finished.get(run_id)

    def active(self, thread_id: str | None = None) -> list[RunJob]:
        if thread_id is not None:
            return list(self._threads.get(thread_id, ()))
        return [job for line in self._threads.values() for job in line]

    def cancel(self, job: RunJob, action: str) -> None:
        if job.done.is_set():
            return
        job.cancel_action = action
        if job.task is not None:
            job.task.cancel()
            return
        # still waiting behind another run of its thread: drop it from the line
        async def drop() -> None:
            try:
                await self._on_cancel_pending(job)
            finally:
                job.done.set()
                self._retire(job)

        job.task = asyncio.get_running_loop().create_task(drop(), name=f"drop-{job.run_id}")

    async def shutdown(self) -> None:
        self._closing = True
        tasks = []
        for job in list(self._jobs.values()):
            if job.task is not None and not job.done.is_set():
                job.cancel_action = job.cancel_action or "shutdown"
                job.task.cancel()
                tasks.append(job.task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
