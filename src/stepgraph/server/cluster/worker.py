"""``ClusterExecutor``: a worker's execution of claimed runs, every outcome fenced by the lease.

It reuses ``RunExecutor`` for the graph itself; what changes is around it:

- **start** (``start``): the claimed run's record is read; a run already settled (a worker
  died after recording its final status), cancelled while it waited for a new worker, or
  whose last ``max_attempts`` executions all ended without committing anything (not even
  one task's writes) is settled here and not executed; a run taken
  back from a lost worker resumes from its last committed checkpoint (its input is never
  applied twice) or, when it committed nothing, runs from its input again.
- **finish** (``_finish``): the final status is written in one transaction with the fence
  (``check_fence``); a worker whose lease moved on records nothing and does not end the
  event stream (the new holder continues it). The queue row becomes ``done`` only after
  the thread's record is refreshed, so the next run of the thread starts after that.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from stepgraph.server.checkpoints import drop_run_checkpoints
from stepgraph.server.cluster.cuts import make_tag
from stepgraph.server.cluster.docsql import delete_doc, set_status, update_run
from stepgraph.server.cluster.fence import Lease, LeaseLost, check_fence
from stepgraph.server.cluster.retry import retrying
from stepgraph.server.cluster.schema import bump_counter
from stepgraph.server.runtime.executor import RunExecutor
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.runtime.recovery import _committed, lost_error
from stepgraph.server.runtime.webhooks import deliver_webhook
from stepgraph.server.serde import dumps, jsonable

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext
    from stepgraph.server.runtime.protocol import ProtocolEmitter
    from stepgraph.server.runtime.wire import WireEmitter

__all__ = ["ClusterExecutor"]

logger = logging.getLogger("stepgraph.server")

_DONE = ("UPDATE sg_run_queue SET status = 'done', lease_owner = NULL WHERE run_id = %s AND lease_epoch = %s"
         " AND status = 'running'")


class ClusterExecutor(RunExecutor):
    """Runs claimed jobs; see the module docstring."""

    def __init__(self, ctx: ServerContext, pool: Any) -> None:
        super().__init__(ctx)
        self.pool = pool

    # -- fenced writes ------------------------------------------------------------------------
    async def fenced(self, lease: Lease, *, change: Any = None, delete: bool = False,
                     result: bytes | None = None, numbered: bool = True) -> bool:
        """Change (or delete) the run's record if the lease still holds; whether it did.
        Retried on a lost connection (the fence makes a replay harmless). ``numbered``: the
        write is one of the execution's commits (``cuts.py``; it counts as progress against
        ``max_attempts``); bookkeeping at the start of an execution is not."""
        docs = self.ctx.backend.docs

        async def write() -> None:
            commit = await lease.begin_commit() if numbered else None
            async with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                await check_fence(cur, lease, commit)
                if delete:
                    await delete_doc(conn, "run", lease.run_id)
                elif change is not None:
                    await update_run(conn, docs, lease.run_id, change)
                if result is not None:
                    await conn.execute("UPDATE sg_run_queue SET result = %s WHERE run_id = %s",
                                       (result.decode(), lease.run_id))

        try:
            await retrying(write, what=f"run {lease.run_id}: final status", deadline=lease.ttl * 2)
        except LeaseLost:
            logger.warning("run %s: the final status of stale lease epoch %d was refused",
                           lease.run_id, lease.epoch)
            await bump_counter(self.pool, "stale_final_refused")
            return False
        return True

    async def mark_done(self, lease: Lease) -> None:
        async def done() -> None:
            async with self.pool.connection() as conn, conn.transaction():
                await conn.execute(_DONE, (lease.run_id, lease.epoch))
                await conn.execute("SELECT pg_notify('sg_done', %s), pg_notify('sg_wake', '')", (lease.run_id,))

        await retrying(done, what=f"run {lease.run_id}: done", deadline=lease.ttl * 2)

    async def refresh(self, lease: Lease, **kwargs: Any) -> None:
        """``ctx.refresh_thread`` retried on a lost connection (it only rewrites the thread's record)."""
        await retrying(lambda: self.ctx.refresh_thread(lease.thread_id, **kwargs),
                       what=f"thread {lease.thread_id}: status", deadline=lease.ttl * 2)

    async def mark_running(self, job: RunJob) -> None:
        lease: Lease = job.lease  # type: ignore[attr-defined]
        base = super().mark_running
        await retrying(lambda: base(job), what=f"run {job.run_id}: running", deadline=lease.ttl * 2)

    async def _pending_on(self, thread_id: str) -> bool:
        async def look() -> bool:
            async with self.pool.connection() as conn:
                row = await (await conn.execute(
                    "SELECT 1 FROM sg_run_queue WHERE thread_id = %s AND status = 'pending' LIMIT 1",
                    (thread_id,))).fetchone()
            return row is not None

        return await retrying(look, what=f"thread {thread_id}: queue")

    # -- start --------------------------------------------------------------------------------
    async def start(self, row: dict[str, Any], lease: Lease) -> RunJob | None:
        """The job of a claimed row, or ``None`` when the run is settled without executing."""
        ctx = self.ctx
        run = await ctx.runs.find(lease.run_id)
        if run is None or run.get("status") not in ("pending", "running"):
            await self.mark_done(lease)  # deleted, or settled by a worker that died right after
            return None
        action = row.get("cancel_action")
        if action:
            await self._settle_cancelled(run, lease, action)
            return None
        limit = ctx.limits.max_attempts
        stalls = await self._stalls(lease, int(row.get("prev_commits") or 0)) if lease.attempt > 1 else 0
        if stalls >= limit:
            error = lost_error(f"the run was executing; {stalls} execution(s) in a row ended without committing "
                               f"anything (max_attempts {limit}), giving up")
            if await self.fenced(lease, change=set_status("error", error=error),
                                 result=dumps({"__error__": error})):
                await self.refresh(lease, status="error", error=error)
                await self.mark_done(lease)
            logger.warning("run %s failed: %s", lease.run_id, error["message"])
            return None
        kwargs = run["kwargs"]
        if lease.attempt > 1:
            run["_attempt"] = lease.attempt
            run["_resume"] = bool(run.get("_resume")) or await _committed(ctx, run)
            logger.warning("run %s taken over: %s as attempt %d", lease.run_id,
                           "resumed from its last checkpoint" if run["_resume"] else "re-run from its input",
                           lease.attempt)
        metadata = (kwargs.get("config") or {}).get("metadata")
        if isinstance(metadata, dict):
            metadata["run_attempt"] = lease.attempt
            metadata["lease_epoch"] = lease.epoch
        if lease.attempt > 1 and not await self.fenced(lease, change=_retried(run), numbered=False):
            return None  # the record says which attempt this is (the API shows it)
        if kwargs.get("protocol") == "v3":  # its seq continue where the thread's previous run stopped
            try:
                await ctx.thread_logs.prepare(lease.thread_id)  # type: ignore[attr-defined]
            except Exception as exc:  # noqa: BLE001 - the store is away: numbering may restart
                logger.warning("thread %s: its shared v3 log could not be read: %s", lease.thread_id, exc)
        if lease.attempt > 1:  # before any event of this epoch: readers skip what the last one did not commit
            await self._cut(lease, int(row.get("prev_commits") or 0))
        log = ctx.events.open(lease.run_id, resumable=bool(kwargs.get("resumable")),  # type: ignore[call-arg]
                              epoch=lease.epoch, on_stale=lambda dropped: self._stale_events(lease, dropped),
                              tag=lambda: make_tag(lease.epoch, lease.next_commit))
        publisher = log.publisher  # type: ignore[attr-defined]
        lease.before_commit = lambda: publisher.flushed(min(5.0, lease.ttl / 2))
        if lease.attempt > 1:
            log.append("metadata", dumps({"run_id": lease.run_id, "attempt": lease.attempt}))
        return RunJob(run=run, log=log, temporary=bool(kwargs.get("temporary")))

    async def _cut(self, lease: Lease, commits: int) -> None:
        """Record the previous epoch's cut (``cuts.py``); the store away: at least once."""
        try:
            await self.ctx.events.store.cut(lease.run_id, lease.epoch - 1, commits)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001
            logger.warning("run %s: the cut of epoch %d could not be written: %s", lease.run_id, lease.epoch - 1, exc)

    def _stale_events(self, lease: Lease, dropped: int) -> None:
        """The event store refused this lease's events: the run is another worker's now."""
        lease.mark_lost()
        task = asyncio.get_running_loop().create_task(bump_counter(self.pool, "stale_events_refused", dropped))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _stalls(self, lease: Lease, prev_commits: int) -> int:
        """Executions in a row that ended without committing anything (counted at each claim,
        from the commits the previous epoch recorded: a checkpoint or one task's writes is
        progress): a run that progresses is retried however often its workers die; one that
        never gets a write through (a poison run killing its workers) fails after
        ``max_attempts``."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(
                "UPDATE sg_run_queue SET stalls = CASE WHEN %s > 0 THEN 0 ELSE stalls + 1 END"
                " WHERE run_id = %s AND lease_epoch = %s RETURNING stalls",
                (prev_commits, lease.run_id, lease.epoch))).fetchone()
        return int(row[0]) if row else 0

    async def _settle_cancelled(self, run: dict[str, Any], lease: Lease, action: str) -> None:
        ctx = self.ctx
        if action == "rollback":
            if await self.fenced(lease, delete=True):
                await drop_run_checkpoints(ctx.backend.saver, lease.thread_id, lease.run_id)
        elif not await self.fenced(lease, change=set_status("interrupted")):
            return
        await self.refresh(lease)
        await self.mark_done(lease)

    # -- finish -------------------------------------------------------------------------------
    async def _finish(self, job: RunJob, emitter: WireEmitter, status: str, error: Any, graph: Any,
                      proto: ProtocolEmitter | None = None) -> None:
        ctx = self.ctx
        lease: Lease = job.lease  # type: ignore[attr-defined]
        if lease.lost or job.cancel_action in ("lease_lost", "shutdown"):
            ctx.events.abandon(job.run_id)  # type: ignore[attr-defined]
            return
        ok = False
        try:
            job.result = {"__error__": error} if error is not None else jsonable(emitter.last_values, stream=True)
            if status == "interrupted" and job.cancel_action == "rollback":
                ok = await self.fenced(lease, delete=True)
                if ok:
                    await drop_run_checkpoints(ctx.backend.saver, job.thread_id, job.run_id)
                    await self.refresh(lease)
                    job.result = None
            else:
                extra = {"error": error} if error is not None else {}
                ok = await self.fenced(lease, change=set_status(status, **extra), result=dumps(job.result))
                if ok:
                    queued = await self._pending_on(job.thread_id)
                    await self.refresh(lease, status="busy" if queued else "error" if error else None,
                                       error=error, graph=graph)
            if ok:
                job.status = status
                self._count_finished(job, status)
                if job.temporary:
                    await ctx.service.delete_thread_data(job.thread_id, keep_job=job)
                await self.mark_done(lease)
        except Exception:  # noqa: BLE001 - bookkeeping must not hide the run's outcome
            logger.exception("finishing run %s failed", job.run_id)
        finally:
            if not ok:
                ctx.events.abandon(job.run_id)  # type: ignore[attr-defined]
            else:
                if proto is not None:
                    proto.finish(status, error)
                ctx.events.close(job.run_id)
        if ok and job.run["kwargs"].get("webhook"):
            task = asyncio.get_running_loop().create_task(deliver_webhook(ctx, job.run["kwargs"]["webhook"], job))
            self._background.add(task)
            task.add_done_callback(self._background.discard)


def _retried(run: dict[str, Any]) -> Any:
    """The change that records a retried run's attempt (and whether it resumes) in its record."""
    attempt, resume = run["_attempt"], run["_resume"]

    def change(doc: dict[str, Any]) -> None:
        doc["_attempt"], doc["_resume"] = attempt, resume
        metadata = ((doc.get("kwargs") or {}).get("config") or {}).get("metadata")
        if isinstance(metadata, dict):
            metadata["run_attempt"] = attempt

    return change
