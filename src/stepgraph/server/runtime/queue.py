"""The run queue: one run at a time per thread, many threads at once.

``RunQueue`` is the interface (a Postgres/Redis queue shared by several server processes
can implement it: a run row is claimable once ``not_before`` has passed and no run of its
thread is running); ``LocalRunQueue`` runs every job as an asyncio task of this process.

- **Per thread**, jobs start one after the other, in the order they became eligible
  (``not_before``: the creation time plus ``after_seconds``; a run resumed after a crash
  goes first), ties in submission order. A job starts only once the previous one of its
  thread has finished, so a replacement run (``interrupt``/``rollback``) never starts
  before the run it replaces has stopped.
- **Slots**: at most ``n_jobs`` jobs execute at once. A delayed job waits for its time
  *outside* the slots (a timer of its thread's line), so delayed runs never hold a slot;
  it can be cancelled (or replaced by a multitask strategy) while it waits.
- A job's task belongs to the server, not to the request that created it, so a client
  that disconnects does not stop its run.
- Finished jobs stay reachable by id (``join`` answers from them) within a byte budget
  (their result, record and event log, encoded), oldest first out; older runs are answered
  from storage.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.runtime.eventlog import RunLog
from stepgraph.server.serde import dumps

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
    seq: int = 0
    """Submission order (set by the queue)."""
    nbytes: int = 0
    """What the job holds once finished (set by the queue)."""
    abandoned: bool = False
    """The server stops: the job is cancelled and nothing waits for its threads."""
    submitted_at: float = field(default_factory=time.time)
    """When the job was handed to the queue (epoch seconds)."""

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    @property
    def thread_id(self) -> str:
        return self.run["thread_id"]

    @property
    def not_before(self) -> float:
        """When the run becomes eligible (epoch seconds); 0 for a run resumed after a crash."""
        if self.run.get("_resume"):
            return 0.0
        return float(self.run.get("_not_before") or 0.0)

    def footprint(self) -> int:
        """Bytes of the encoded result, record and event log."""
        total = self.log.nbytes
        for part in (self.result, self.run):
            try:
                total += len(dumps(part))
            except (TypeError, ValueError):
                total += len(repr(part))
        return total


Executor = Callable[[RunJob], Awaitable[None]]


class RunQueue(ABC):
    """Accepts jobs and runs them; cancels and awaits them by run id."""

    @abstractmethod
    def submit(self, job: RunJob) -> None:
        """Queue ``job`` on its thread (it starts when eligible and the thread is free)."""

    @abstractmethod
    def job(self, run_id: str) -> RunJob | None:
        """A queued, running or recently finished job."""

    @abstractmethod
    def active(self, thread_id: str | None = None) -> list[RunJob]:
        """Pending and running jobs (of one thread, or all), in the order they will run."""

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


def _order(job: RunJob) -> tuple[float, int]:
    return (job.not_before, job.seq)


@dataclass(eq=False)
class _Line:
    """The jobs of one thread: the one started (``current``) and those waiting, in order."""

    waiting: list[RunJob] = field(default_factory=list)
    current: RunJob | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    driver: asyncio.Task[None] | None = None

    def jobs(self) -> list[RunJob]:
        return ([self.current] if self.current is not None else []) + self.waiting


class LocalRunQueue(RunQueue):
    """Jobs as asyncio tasks of this process."""

    def __init__(self, execute: Executor, on_cancel_pending: Executor, n_jobs: int = 10,
                 keep_finished: int = 1000, finished_bytes: int = 32 << 20) -> None:
        self._execute = execute
        self._on_cancel_pending = on_cancel_pending
        self._slots = asyncio.Semaphore(max(1, n_jobs))
        self._threads: dict[str, _Line] = {}
        self._jobs: dict[str, RunJob] = {}
        self._finished: OrderedDict[str, RunJob] = OrderedDict()
        self._keep = keep_finished
        self.finished_bytes = finished_bytes
        self.finished_nbytes = 0
        """Bytes held by the finished jobs kept."""
        self._closing = False
        self._watchers: dict[str, set[asyncio.Queue[RunJob]]] = {}
        self._seq = itertools.count(1)

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
        job.seq = next(self._seq)
        self._jobs[job.run_id] = job
        line = self._threads.get(job.thread_id)
        if line is None:
            line = self._threads[job.thread_id] = _Line()
        bisect.insort(line.waiting, job, key=_order)
        line.changed.set()
        if line.driver is None and not self._closing:
            line.driver = asyncio.get_running_loop().create_task(
                self._drive(job.thread_id, line), name=f"thread-{job.thread_id}")

    async def _drive(self, thread_id: str, line: _Line) -> None:
        """Start the thread's jobs one after the other, each when it is due."""
        try:
            while line.waiting and not self._closing:
                head = line.waiting[0]
                delay = head.not_before - time.time()
                if delay > 0:  # the earliest job is not due yet: wait outside the slots
                    line.changed.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(line.changed.wait(), delay)
                    continue
                line.waiting.pop(0)
                line.current = head
                head.task = asyncio.get_running_loop().create_task(self._run(head), name=f"run-{head.run_id}")
                await asyncio.wait({head.task})
                line.current = None
        finally:
            line.driver = None
            if line.current is None and not line.waiting and self._threads.get(thread_id) is line:
                del self._threads[thread_id]

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
        if job.run_id in self._finished:
            return
        job.nbytes = job.footprint()
        self._finished[job.run_id] = job
        self.finished_nbytes += job.nbytes
        while self._finished and (len(self._finished) > self._keep or self.finished_nbytes > self.finished_bytes):
            _, old = self._finished.popitem(last=False)
            self.finished_nbytes -= old.nbytes

    def job(self, run_id: str) -> RunJob | None:
        return self._jobs.get(run_id) or self._finished.get(run_id)

    def active(self, thread_id: str | None = None) -> list[RunJob]:
        if thread_id is not None:
            line = self._threads.get(thread_id)
            return line.jobs() if line is not None else []
        return [job for line in self._threads.values() for job in line.jobs()]

    def cancel(self, job: RunJob, action: str) -> None:
        if job.done.is_set():
            return
        job.cancel_action = action
        if job.task is not None:
            job.task.cancel()
            return
        line = self._threads.get(job.thread_id)
        if line is not None and job in line.waiting:
            line.waiting.remove(job)  # not started: drop it from its line
            line.changed.set()

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
        for line in list(self._threads.values()):
            if line.driver is not None:
                line.driver.cancel()
                tasks.append(line.driver)
        for job in list(self._jobs.values()):
            if job.task is not None and not job.done.is_set():
                job.cancel_action = job.cancel_action or "shutdown"
                job.abandoned = True
                job.task.cancel()
                tasks.append(job.task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
