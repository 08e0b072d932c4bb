"""``ClusterRunService``: run admission, cancel and join across processes, decided in Postgres.

- **Admission** is one transaction with the thread's record locked (``FOR UPDATE``): the
  thread's ``pending``/``running`` rows decide the multitask strategy (``reject``: 409;
  ``interrupt``/``rollback``: waiting runs are settled at once, a running run gets its
  ``cancel_action`` and is told by ``NOTIFY sg_cancel``; ``enqueue``: nothing), then the
  run's record and its queue row are inserted together, so an accepted run (with its input)
  survives any crash. The replacement run cannot be claimed while the interrupted one is
  ``running`` (the claim's condition, and the partial unique index).
- **Cancel** marks the row the same way; **join** and ``wait`` wait for the row to be
  ``done`` (``NOTIFY sg_done``, and polling) and answer its stored result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepgraph.server.cluster.docsql import delete_doc, lock_thread, set_status, update_run
from stepgraph.server.cluster.schema import NOW
from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.runtime.service import _BUSY, RunService
from stepgraph.server.serde import dumps, loads

if TYPE_CHECKING:
    from stepgraph.server.auth.authorizer import RequestAuth
    from stepgraph.server.cluster.notify import Listener
    from stepgraph.server.cluster.runlogs import SharedEventLog
    from stepgraph.server.context import ServerContext
    from stepgraph.server.runtime.request import RunRequest
    from stepgraph.server.storage.filters import AccessFilter

__all__ = ["ClusterRunService"]

logger = logging.getLogger("stepgraph.server")

_ACTIVE = ("SELECT run_id, status FROM sg_run_queue WHERE thread_id = %s AND status IN ('pending', 'running')"
           " ORDER BY seq")


@dataclass
class LiveRun:
    """A pending or running run as ``/metrics`` counts it (the shape of a ``RunJob``)."""

    run: dict[str, Any]
    status: str
    not_before: float


class ClusterRunService(RunService):
    """``RunService`` whose decisions are transactions on the cluster's queue."""

    def __init__(self, ctx: ServerContext, pool: Any, listener: Listener, *, pg_events: bool) -> None:
        super().__init__(ctx)
        self.pool = pool
        self.listener = listener
        self.pg_events = pg_events
        self._detached: set[asyncio.Task[None]] = set()
        self._graphs: dict[str, str] = {}
        """Graph ids of the runs seen by ``live_runs`` (a run's graph never changes)."""

    @property
    def _events(self) -> SharedEventLog:
        return self.ctx.events  # type: ignore[return-value]

    # -- admission ----------------------------------------------------------------------------
    async def _admit(self, req: RunRequest, assistant: dict[str, Any], thread_id: str, temporary: bool,
                     run_id: str, auth: RequestAuth | None, protocol: str | None,
                     headers: dict[str, str] | None = None, answers: list[str] | None = None) -> RunJob:
        from stepgraph.server.cluster.docsql import put_doc

        run = self._run_doc(req, assistant, thread_id, temporary, run_id=run_id, auth=auth, headers=headers,
                            protocol=protocol, answers=answers)
        meta_event = dumps({"run_id": run_id, "attempt": 1})
        docs = self.ctx.backend.docs
        async with self.pool.connection() as conn, conn.transaction():
            await lock_thread(conn, thread_id)
            active = await (await conn.execute(_ACTIVE, (thread_id,))).fetchall()
            strategy = req.multitask_strategy
            if active and strategy == "reject":
                raise ApiError(409, _BUSY)
            if active and strategy in ("interrupt", "rollback"):
                for other, status in active:
                    await self._cancel_row(conn, other, status, strategy)
            await put_doc(conn, docs, "run", run_id, run, thread_id)
            # due time on the database's clock: the order of admission (under the thread's lock)
            await conn.execute(
                f"INSERT INTO sg_run_queue (run_id, thread_id, status, not_before) VALUES (%s, %s, 'pending', {NOW} + %s)",
                (run_id, thread_id, float(req.after_seconds or 0)))
            if self.pg_events:
                await conn.execute("INSERT INTO sg_run_events (run_id, name, data) VALUES (%s, 'metadata', %s)",
                                   (run_id, meta_event))
            else:  # before the commit: no worker can claim the run before its first event is there
                try:
                    await asyncio.wait_for(self._events.store.append(run_id, [("metadata", meta_event)]), 2.0)
                except Exception as exc:  # noqa: BLE001 - Redis away: the run is accepted all the same
                    logger.warning("run %s: its metadata event could not be published: %s", run_id, exc)
            await conn.execute("SELECT pg_notify('sg_wake', '')")
        metrics = getattr(self.ctx, "metrics", None)
        if metrics is not None:
            metrics.run_created(str(assistant["graph_id"]))
        reader = self._reader(run)
        return RunJob(run=run, log=reader, temporary=temporary)  # type: ignore[arg-type]

    async def _cancel_row(self, conn: Any, run_id: str, status: str, action: str) -> None:
        """In the caller's transaction: settle a waiting run, or flag a running one."""
        if status == "pending":
            await conn.execute("UPDATE sg_run_queue SET status = 'done', cancel_action = %s WHERE run_id = %s",
                               (action, run_id))
            if action == "rollback":
                await delete_doc(conn, "run", run_id)
            else:
                await update_run(conn, self.ctx.backend.docs, run_id, set_status("interrupted"))
            await conn.execute("SELECT pg_notify('sg_done', %s)", (run_id,))
        else:
            await conn.execute("UPDATE sg_run_queue SET cancel_action = %s WHERE run_id = %s"
                               " AND cancel_action IS NULL", (action, run_id))
            await conn.execute("SELECT pg_notify('sg_cancel', %s)", (f"{run_id}:{action}",))

    # -- readers ------------------------------------------------------------------------------
    async def _row(self, run_id: str) -> tuple[str, str | None] | None:
        async with self.pool.connection() as conn:
            row = await (await conn.execute("SELECT status, result FROM sg_run_queue WHERE run_id = %s",
                                            (run_id,))).fetchone()
        return (row[0], row[1]) if row else None

    async def _finished(self, run_id: str) -> bool:
        row = await self._row(run_id)
        return row is None or row[0] == "done"

    def _reader(self, run: dict[str, Any]) -> Any:
        run_id = run["run_id"]
        return self._events.reader(run_id, resumable=bool(run["kwargs"].get("resumable")),
                                   finished=lambda: self._finished(run_id))

    async def wait_done(self, run_id: str) -> tuple[str, str | None] | None:
        """Wait until the run's row is ``done``; its ``(status, result)``."""
        while True:
            row = await self._row(run_id)
            if row is None or row[0] == "done":
                return row
            await self.listener.wait("sg_done", run_id, 1.0)

    # -- views of the thread's runs, from the queue table (any process) ------------------------
    async def active_runs(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's pending and running runs in any process: the running one first, then
        the waiting ones in the order they will be claimed."""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(
                "SELECT run_id, status FROM sg_run_queue WHERE thread_id = %s AND status IN ('pending', 'running')"
                " ORDER BY status = 'running' DESC, priority, not_before, seq", (thread_id,))).fetchall()
        out = []
        for run_id, status in rows:
            run = await self.ctx.runs.find(run_id)
            if run is not None:
                out.append({**run, "status": "running" if status == "running" else run.get("status", "pending")})
        return out

    async def live_runs(self) -> list[LiveRun]:
        """Every pending and running run of the queue (``/metrics``), oldest first."""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(
                f"SELECT run_id, status, not_before - {NOW} FROM sg_run_queue"
                " WHERE status IN ('pending', 'running') ORDER BY seq LIMIT 10000")).fetchall()
        out = []
        now = time.time()
        for run_id, status, due_in in rows:
            graph_id = self._graphs.get(run_id)
            if graph_id is None:
                run = await self.ctx.runs.find(run_id)
                graph_id = self._graphs[run_id] = str(((run or {}).get("metadata") or {}).get("graph_id"))
                if len(self._graphs) > 50_000:
                    self._graphs.clear()
            out.append(LiveRun({"metadata": {"graph_id": graph_id}}, status, now + float(due_in or 0.0)))
        return out

    async def busy(self, thread_id: str) -> bool:
        async with self.pool.connection() as conn:
            row = await (await conn.execute(
                "SELECT 1 FROM sg_run_queue WHERE thread_id = %s AND status IN ('pending', 'running') LIMIT 1",
                (thread_id,))).fetchone()
        return row is not None

    async def thread_runs(self, thread_id: str, heartbeat: float) -> AsyncIterator[tuple[Any, bool] | None]:
        """The thread's runs from the queue table, wherever they are created or executed:
        first the active ones, then each run admitted later (``seq`` above the highest seen),
        found on ``NOTIFY sg_wake`` or by polling every second."""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(
                "SELECT run_id, status, seq FROM sg_run_queue WHERE thread_id = %s AND status IN ('pending', 'running')"
                " ORDER BY status = 'running' DESC, priority, not_before, seq", (thread_id,))).fetchall()
            top = await (await conn.execute("SELECT COALESCE(MAX(seq), 0) FROM sg_run_queue WHERE thread_id = %s",
                                            (thread_id,))).fetchone()
        last = int(top[0]) if top else 0
        for run_id, status, _ in rows:
            run = await self.ctx.runs.find(run_id)
            if run is not None:
                yield self._reader(run), status == "running"
        quiet_since = time.monotonic()
        while True:
            async with self.pool.connection() as conn:
                rows = await (await conn.execute(
                    "SELECT run_id, seq FROM sg_run_queue WHERE thread_id = %s AND seq > %s ORDER BY seq",
                    (thread_id, last))).fetchall()
            for run_id, seq in rows:
                last = max(last, int(seq))
                run = await self.ctx.runs.find(run_id)
                if run is not None:
                    yield self._reader(run), False
            if rows:
                quiet_since = time.monotonic()
                continue
            await self.listener.wait("sg_wake", "", min(1.0, heartbeat))
            if time.monotonic() - quiet_since >= heartbeat:
                quiet_since = time.monotonic()
                yield None

    def cancel_detached(self, run_id: str, action: str = "interrupt") -> None:
        task = asyncio.get_running_loop().create_task(self.cancel_quietly(run_id, action))
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)

    # -- cancel / join ------------------------------------------------------------------------
    async def cancel(self, thread_id: str | None, run_id: str, *, action: str = "interrupt", wait: bool = False) -> None:
        await self.ctx.runs.get(thread_id, run_id)
        if not await self.cancel_run(run_id, action):
            raise ApiError(404, "No runs found to cancel.")
        if wait:
            await self.wait_done(run_id)

    async def cancel_run(self, run_id: str, action: str) -> bool:
        """Cancel an active run wherever it executes; ``False`` when it is not active."""
        async with self.pool.connection() as conn, conn.transaction():
            row = await (await conn.execute(
                "SELECT status FROM sg_run_queue WHERE run_id = %s FOR UPDATE", (run_id,))).fetchone()
            if row is None or row[0] == "done":
                return False
            await self._cancel_row(conn, run_id, row[0], action)
        return True

    async def cancel_quietly(self, run_id: str, action: str) -> None:
        """``cancel_run`` for callbacks (a disconnected client): failures are only logged."""
        try:
            await self.cancel_run(run_id, action)
        except Exception:  # noqa: BLE001
            logger.exception("cancelling run %s failed", run_id)

    async def cancel_many(self, *, thread_id: str | None, run_ids: list[str] | None,
                          status: str | None, action: str, access: AccessFilter | None = None) -> int:
        sql, params = "SELECT run_id, thread_id, status FROM sg_run_queue WHERE status IN ('pending', 'running')", []
        if thread_id is not None:
            sql += " AND thread_id = %s"
            params.append(thread_id)
        if run_ids is not None:
            if not run_ids:
                return 0
            sql += f" AND run_id IN ({', '.join(['%s'] * len(run_ids))})"
            params.extend(run_ids)
        if status in ("pending", "running"):
            sql += " AND status = %s"
            params.append(status)
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(sql, params)).fetchall()
        if access is not None:
            visible = {t for t in {r[1] for r in rows} if await self.ctx.threads.find(t, access) is not None}
            rows = [r for r in rows if r[1] in visible]
        count = 0
        for run_id, _, _ in rows:
            count += await self.cancel_run(run_id, action)
        return count

    async def outcome(self, run: dict[str, Any]) -> Any:
        job = self.ctx.queue.job(run["run_id"])
        if job is not None:  # executing here (role all)
            await job.done.wait()
        row = await self.wait_done(run["run_id"])
        if row is not None and row[1] is not None:
            return loads(row[1])
        return await super().outcome(run)

    def stream_plan(self, run: dict[str, Any], after: tuple[int, int] | None) -> tuple[Any, Any, bool]:
        resumable = bool((run.get("kwargs") or {}).get("resumable"))
        if not resumable:
            after = None
        if run.get("status") in ("pending", "running") or after is not None:
            return self._reader(run), after, after is None
        return super().stream_plan(run, after)

    # -- threads / start-up -------------------------------------------------------------------
    async def delete_thread_data(self, thread_id: str, *, keep_job: RunJob | None = None) -> None:
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(_ACTIVE, (thread_id,))).fetchall()
        keep = keep_job.run_id if keep_job is not None else None
        others = [r[0] for r in rows if r[0] != keep]
        for run_id in others:
            await self.cancel_run(run_id, "interrupt")
        deadline = time.monotonic() + 60
        for run_id in others:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wait_done(run_id), max(0.1, deadline - time.monotonic()))
        await self.ctx.backend.saver.adelete_thread(thread_id)
        await self.ctx.runs.delete_thread(thread_id)
        await self.ctx.crons.delete_thread(thread_id)
        await self.ctx.threads.delete(thread_id)
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM sg_run_queue WHERE thread_id = %s AND status = 'done'", (thread_id,))
        self.ctx.thread_logs.discard(thread_id)

    async def recover(self) -> None:
        """Nothing to do at start-up: the reapers take back what a dead process held."""
        return None
