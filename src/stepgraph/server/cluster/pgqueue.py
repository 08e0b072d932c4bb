"""``ClusterRunQueue``: runs are rows of ``sg_run_queue``, claimed by workers with leases.

- **Claim**: a worker with a free slot takes the first due ``pending`` run whose thread has
  no ``running`` run and that is the head of its thread's line (``priority`` 0 for a run
  taken back from a lost worker, then ``not_before``, then submission order), with
  ``FOR UPDATE SKIP LOCKED``; the claim sets ``running``, increments ``lease_epoch`` and
  ``attempt``, sets the lease and returns the commits the previous epoch recorded (its cut,
  ``cuts.py``). Two claims on one thread at once: the partial unique
  index refuses the second (retried), so a thread never runs two runs.
- **Heartbeat** every ``heartbeat`` s extends the lease, conditional on the epoch; when it
  finds the lease gone, or cannot renew it before it expires, the local run stops at once
  (without recording anything: it is no longer this worker's).
- **Reaper** (every process, every ``reaper`` s): runs whose lease expired go back to
  ``pending`` (first of their thread); the next claim resumes them from their last
  committed step, or fails them once ``max_attempts`` executions in a row committed nothing.
  The reaper also fences the run's event stream to the next epoch (``on_reaped``).
- **Cancel** reaches the worker by ``NOTIFY sg_cancel`` (fast path) and by the run's row,
  read at every heartbeat and step commit (authoritative).

The synchronous ``RunQueue`` methods answer for the runs this process executes; the
cluster-wide views (admission, cancel, join) are in ``admission.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from stepgraph.server.cluster.dialect import dialect_of
from stepgraph.server.cluster.fence import Lease, current_lease
from stepgraph.server.cluster.options import ClusterOptions
from stepgraph.server.cluster.schema import NOW
from stepgraph.server.runtime.queue import RunJob, RunQueue

if TYPE_CHECKING:
    from stepgraph.server.cluster.notify import Listener
    from stepgraph.server.context import ServerContext

__all__ = ["ClusterRunQueue"]

logger = logging.getLogger("stepgraph.server")

_HEARTBEAT = (
    f"UPDATE sg_run_queue SET lease_expires = {NOW} + %s WHERE run_id = %s AND lease_epoch = %s"
    " AND status = 'running' RETURNING cancel_action"
)
_REAP = (
    f"UPDATE sg_run_queue SET status = 'pending', priority = 0, lease_owner = NULL"
    f" WHERE status = 'running' AND lease_expires < {NOW} RETURNING run_id, lease_owner, attempt, lease_epoch"
)
_DUE = f"SELECT 1 FROM sg_run_queue WHERE status = 'pending' AND not_before <= {NOW} LIMIT 1"
_RELEASE = (
    "UPDATE sg_run_queue SET status = 'pending', priority = 0, lease_owner = NULL"
    " WHERE run_id = %s AND lease_epoch = %s AND status = 'running'"
)

Starter = Callable[[dict[str, Any], Lease], Awaitable[RunJob | None]]


class ClusterRunQueue(RunQueue):
    """The cluster's queue as seen by one process (see the module docstring)."""

    def __init__(
        self,
        ctx: ServerContext,
        pool: Any,
        listener: Listener,
        opts: ClusterOptions,
        execute: Callable[[RunJob], Awaitable[None]],
        *,
        n_jobs: int,
    ) -> None:
        self.ctx = ctx
        self.pool = pool
        self.listener = listener
        self.opts = opts
        self._execute = execute
        self.n_jobs = max(1, n_jobs)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._jobs: dict[str, RunJob] = {}
        self._starting: dict[str, str | None] = {}
        """Runs claimed whose job is being made, with a cancel that arrived meanwhile."""
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self.on_reaped: Callable[[str, int], Awaitable[None]] | None = None
        """Called for each run taken back, with the epoch that lost it (set by ``wiring``)."""
        self.on_pass: Callable[[], Awaitable[Any]] | None = None
        """Called after each reaper pass (set by ``wiring``: drops the events of old runs)."""
        self.starter: Starter | None = None
        """Turns a claimed row into a job (set by ``wiring``: reads the run, settles edge cases)."""
        listener.on("sg_wake", lambda _: self._wake.set())
        listener.on("sg_done", lambda _: self._wake.set())
        listener.on("sg_cancel", self._on_cancel_note)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.opts.executes:
            self._tasks.append(loop.create_task(self._claim_loop(), name="cluster-claim"))
        self._tasks.append(loop.create_task(self._reaper_loop(), name="cluster-reaper"))

    async def shutdown(self) -> None:
        """Stop claiming; give the runs executing here back to the queue (fenced)."""
        self._closing = True
        for task in self._tasks:
            task.cancel()
        jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel_action = "shutdown"
            job.abandoned = True
            if job.task is not None:
                job.task.cancel()
        waits = [t for t in self._tasks] + [j.task for j in jobs if j.task is not None]
        if waits:
            await asyncio.gather(*waits, return_exceptions=True)
        for job in jobs:
            lease: Lease = job.lease  # type: ignore[attr-defined]
            with contextlib.suppress(Exception):
                async with self.pool.connection() as conn:
                    await conn.execute(_RELEASE, (lease.run_id, lease.epoch))
                    await conn.execute("SELECT pg_notify('sg_wake', '')")

    # -- RunQueue (this process's runs) -------------------------------------------------------
    def submit(self, job: RunJob) -> None:
        raise RuntimeError(
            "cluster runs are admitted in Postgres (cluster.admission), not submitted"
        )

    def job(self, run_id: str) -> RunJob | None:
        return self._jobs.get(run_id)

    def active(self, thread_id: str | None = None) -> list[RunJob]:
        return [j for j in self._jobs.values() if thread_id is None or j.thread_id == thread_id]

    def cancel(self, job: RunJob, action: str) -> None:
        """Cancel through the cluster (the run may execute in another process)."""
        local = self._jobs.get(job.run_id)
        if local is not None:
            self._cancel_local(local, action)
        task = asyncio.get_running_loop().create_task(
            self.ctx.service.cancel_quietly(job.run_id, action)
        )
        self._tasks.append(task)
        task.add_done_callback(lambda t: self._tasks.remove(t) if t in self._tasks else None)

    def subscribe(self, thread_id: str) -> asyncio.Queue[RunJob]:
        return (
            asyncio.Queue()
        )  # unused: the thread-wide stream reads the queue table (ClusterRunService)

    def unsubscribe(self, thread_id: str, queue: asyncio.Queue[RunJob]) -> None:
        return None

    # -- cancel -------------------------------------------------------------------------------
    def _on_cancel_note(self, payload: str) -> None:
        run_id, _, action = payload.partition(":")
        job = self._jobs.get(run_id)
        if job is not None:
            self._cancel_local(job, action or "interrupt")
        elif run_id in self._starting:  # claimed, its job not made yet: cancelled once it is
            self._starting[run_id] = action or "interrupt"

    def _cancel_local(self, job: RunJob, action: str) -> None:
        if job.done.is_set() or job.cancel_action is not None:
            return
        job.cancel_action = action
        if job.task is not None:
            job.task.cancel()

    def _lost(self, job: RunJob) -> None:
        """The lease is gone: stop the local run now, record nothing."""
        if job.done.is_set():
            return
        logger.warning("run %s: lease lost, stopping the local execution", job.run_id)
        job.cancel_action = "lease_lost"
        job.abandoned = True
        if job.task is not None:
            job.task.cancel()

    # -- claiming -----------------------------------------------------------------------------
    async def _claim_loop(self) -> None:
        while not self._closing:
            if len(self._jobs) >= self.n_jobs:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.opts.poll)
                continue
            self._wake.clear()
            try:
                row = await self._claim()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Postgres away: try again later
                logger.warning("claiming a run failed: %s", exc)
                await asyncio.sleep(self.opts.poll)
                continue
            if row is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.opts.poll)
                continue
            await self._start(row)

    async def _claim(self) -> dict[str, Any] | None:
        dialect = dialect_of(self.pool)
        if not await self._due():
            return None
        for _ in range(5):
            try:
                async with self.pool.connection() as conn, conn.transaction():
                    got = await (
                        await conn.execute(dialect.claim, (self.owner, self.opts.lease_ttl))
                    ).fetchone()
                    if got is not None:  # before the commit: a cancel noted from then on is kept
                        self._starting[got[0]] = None
                        if dialect.after_claim is not None:
                            await conn.execute(dialect.after_claim, (got[0],))
            except dialect.unique_errors():
                continue  # another worker started a run of that thread at the same moment
            if got is None:
                return None
            run_id, thread_id, epoch, attempt, cancel_action, prev_commits = got
            return {
                "run_id": run_id,
                "thread_id": thread_id,
                "epoch": int(epoch),
                "attempt": int(attempt),
                "cancel_action": cancel_action,
                "prev_commits": int(prev_commits),
            }
        return None

    async def _due(self) -> bool:
        """Whether a run may be due (one read, no lock): a wake-up that finds none skips the
        claim's transaction. A run admitted after this read wakes the loop again."""
        async with self.pool.connection() as conn:
            return await (await conn.execute(_DUE)).fetchone() is not None

    async def _start(self, row: dict[str, Any]) -> None:
        lease = Lease(
            row["run_id"], row["thread_id"], row["epoch"], row["attempt"], ttl=self.opts.lease_ttl
        )
        assert self.starter is not None
        self._starting.setdefault(lease.run_id, None)
        try:
            job = await self.starter(row, lease)
        except Exception:  # noqa: BLE001 - the lease expires and the run is retried elsewhere
            logger.exception("starting run %s failed", row["run_id"])
            return
        finally:
            early = self._starting.pop(lease.run_id, None)
        if job is None:
            return
        job.lease = lease  # type: ignore[attr-defined]
        lease.on_lost = lambda: self._lost(job)
        lease.on_cancel = lambda action: self._cancel_local(job, action)
        self._jobs[job.run_id] = job
        job.task = asyncio.get_running_loop().create_task(
            self._run(job, lease), name=f"run-{job.run_id}"
        )
        if early:  # once the task has started (a task cancelled before its first step runs nothing)
            asyncio.get_running_loop().call_soon(self._cancel_local, job, early)

    async def _run(self, job: RunJob, lease: Lease) -> None:
        current_lease.set(lease)
        beat = asyncio.get_running_loop().create_task(
            self._heartbeat(job, lease), name=f"beat-{job.run_id}"
        )
        try:
            job.started = True
            await self._execute(job)
        except asyncio.CancelledError:
            pass
        finally:
            beat.cancel()
            with contextlib.suppress(BaseException):
                await beat
            job.done.set()
            self._jobs.pop(job.run_id, None)
            self._wake.set()

    async def _heartbeat(self, job: RunJob, lease: Lease) -> None:
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(self.opts.heartbeat)
            try:
                async with self.pool.connection(timeout=self.opts.heartbeat) as conn:
                    got = await (
                        await conn.execute(
                            _HEARTBEAT, (self.opts.lease_ttl, lease.run_id, lease.epoch)
                        )
                    ).fetchone()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried until the lease would have expired
                if time.monotonic() - renewed + self.opts.heartbeat >= self.opts.lease_ttl:
                    logger.warning(
                        "run %s: heartbeat failed (%s) and the lease is about to expire",
                        lease.run_id,
                        exc,
                    )
                    lease.mark_lost()
                    return
                continue
            if got is None:
                lease.mark_lost()
                return
            renewed = time.monotonic()
            if got[0]:
                self._cancel_local(job, got[0])

    # -- reaping ------------------------------------------------------------------------------
    async def _reaper_loop(self) -> None:
        if dialect_of(
            self.pool
        ).local_owners:  # one machine: what a killed process held resumes now
            with contextlib.suppress(Exception):
                await self.reap()
        while not self._closing:
            await asyncio.sleep(self.opts.reaper)
            try:
                await self.reap()
                if self.on_pass is not None:
                    await self.on_pass()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - next round
                logger.warning("reaping expired leases failed: %s", exc)

    async def reap(self) -> int:
        """Put runs with an expired lease back in the queue; how many. When every holder runs
        on this machine (SQLite), the leases of processes that no longer exist expire first."""
        if dialect_of(self.pool).local_owners:
            await self._expire_dead_owners()
        async with self.pool.connection() as conn, conn.transaction():
            rows = await (await conn.execute(_REAP)).fetchall()
            if rows:
                await conn.execute("SELECT pg_notify('sg_wake', '')")
        for run_id, _, attempt, epoch in rows:
            logger.warning("run %s: lease expired (attempt %d); back in the queue", run_id, attempt)
            if self.on_reaped is not None:
                await self.on_reaped(run_id, int(epoch))
        return len(rows)

    async def _expire_dead_owners(self) -> None:
        async with self.pool.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT DISTINCT lease_owner FROM sg_run_queue WHERE status = 'running'"
                )
            ).fetchall()
        dead = [
            owner for (owner,) in rows if owner and owner != self.owner and _process_gone(owner)
        ]
        for owner in dead:
            logger.warning("lease holder %s is gone: its runs go back in the queue now", owner)
            async with self.pool.connection() as conn:
                await conn.execute(
                    "UPDATE sg_run_queue SET lease_expires = 0 WHERE status = 'running'"
                    " AND lease_owner = %s",
                    (owner,),
                )


def _process_gone(owner: str) -> bool:
    """Whether the lease holder ``owner`` (``host:pid:tag``) is a process of this machine that
    no longer exists (another process of this one's pid, or of another host: not known)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False
