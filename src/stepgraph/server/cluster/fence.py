"""Fencing: a run's writes are accepted only while its lease (``run_id``, ``lease_epoch``) holds.

``Lease`` is what a worker holds for a claimed run; ``current_lease`` (a context variable
set around the run's execution, so every task of the run sees it) tells the saver which
lease a write belongs to. ``FencedPostgresSaver`` runs each write of a leased run in one
transaction with ``SELECT ... FOR SHARE`` of the run's queue row, conditional on the epoch
and ``status = 'running'``: a reaper or another worker changing the lease must wait for
that transaction, and a write after the lease moved on is refused with ``LeaseLost`` (the
local run then stops). Writes outside a run (state updates from the API, deletes) are not
fenced. Each fenced write is a numbered commit (``Lease.begin_commit``): it waits until
the run's events published before it are in the shared store and records its number in
the queue row (an ``UPDATE`` instead of ``FOR SHARE``), which tells readers which events
belong to committed steps (``cuts.py``). ``FencedSqliteSaver`` does the same on SQLite: the
fence (the same ``UPDATE``, rendered for SQLite) is the first statement of the write's
``BEGIN IMMEDIATE`` transaction, which holds the database's write lock until the commit, so
the reaper and the next claim (writers too) wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from stepgraph.checkpoint._flows import Flow, Op, R
from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stepgraph.server.cluster.dialect import render_sqlite
from stepgraph.server.cluster.retry import ReplayableFlow, retrying
from stepgraph.server.cluster.schema import bump_counter
from stepgraph.server.storage.liteinline import BUSY_TIMEOUT_MS, is_busy, prepare_inline

__all__ = [
    "COMMIT_SQL",
    "FENCE_SQL",
    "FencedPostgresSaver",
    "FencedSqliteSaver",
    "Lease",
    "LeaseLost",
    "current_lease",
]

logger = logging.getLogger("stepgraph.server")

FENCE_SQL = (
    "SELECT cancel_action, set_config('idle_in_transaction_session_timeout', %s, true)"
    " FROM sg_run_queue WHERE run_id = %s AND lease_epoch = %s AND status = 'running' FOR SHARE"
)
"""The fence: the queue row of a run still held with this epoch (locked until commit). The
transaction may stay idle at most the lease's length: a worker frozen inside it (SIGSTOP,
a long GC pause) loses its session, so its row lock never blocks the reaper for long."""

COMMIT_SQL = (
    "UPDATE sg_run_queue SET commits = GREATEST(commits, %s) WHERE run_id = %s AND lease_epoch = %s"
    " AND status = 'running'"
    " RETURNING cancel_action, set_config('idle_in_transaction_session_timeout', %s, true)"
)
"""The fence of a commit: the same condition, and the commit's number recorded with it
(``cuts.py``: the events published before the commit are the committed ones)."""

_SQLITE_COMMIT = render_sqlite(
    "UPDATE sg_run_queue SET commits = GREATEST(commits, %s) WHERE run_id = %s"
    " AND lease_epoch = %s AND status = 'running' RETURNING cancel_action"
)
"""The fence of a commit on SQLite (no idle timeout to set: the transaction holds the
database's write lock, and it never waits for the network)."""


class LeaseLost(RuntimeError):  # noqa: N818 - the name says what happened
    """The run's lease moved on (expired and reclaimed): this worker may not commit for it."""

    def __init__(self, run_id: str, epoch: int) -> None:
        super().__init__(
            f"run {run_id}: lease epoch {epoch} is no longer held; the write was refused"
        )
        self.run_id = run_id
        self.epoch = epoch


@dataclass(eq=False)
class Lease:
    """A claimed run: its id, thread, epoch and what to call when a fence finds it lost or
    cancelled (``on_lost``, ``on_cancel(action)``)."""

    run_id: str
    thread_id: str
    epoch: int
    attempt: int
    ttl: float = 30.0
    on_lost: Callable[[], None] = field(default=lambda: None)
    on_cancel: Callable[[str], None] = field(default=lambda action: None)
    lost: bool = False
    refused: int = 0
    """Writes refused for this lease (stale epoch)."""
    next_commit: int = 1
    """The number the next commit of this execution takes (the tag of events published now)."""
    before_commit: Callable[[], Awaitable[None]] | None = None
    """Waits until the events published so far are in the shared store (set by the worker)."""

    async def begin_commit(self) -> int:
        """Number a commit about to be made and wait until the events before it are published."""
        number = self.next_commit
        self.next_commit += 1
        if self.before_commit is not None:
            await self.before_commit()
        return number

    def mark_lost(self) -> None:
        if not self.lost:
            self.lost = True
            self.on_lost()


current_lease: contextvars.ContextVar[Lease | None] = contextvars.ContextVar(
    "stepgraph_lease", default=None
)


async def check_fence(cur: Any, lease: Lease, commit: int | None = None) -> str | None:
    """In the caller's transaction: raise ``LeaseLost`` unless the lease holds; the run's
    requested cancel action (``None`` when none). With ``commit`` (``Lease.begin_commit``)
    the commit's number is recorded with the fence."""
    idle = str(max(1000, int(lease.ttl * 1000)))
    if commit is None:
        await cur.execute(FENCE_SQL, (idle, lease.run_id, lease.epoch))
    else:
        await cur.execute(COMMIT_SQL, (commit, lease.run_id, lease.epoch, idle))
    row = await cur.fetchone()
    if row is None:
        lease.refused += 1
        raise LeaseLost(lease.run_id, lease.epoch)
    return row[0]


class FencedPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` whose writes for a leased run are conditional on the lease."""

    async def _atransact(self, flow: Flow[R], write: bool) -> R:
        """One transaction for ``flow`` (fenced when a leased run writes), run again on a fresh
        connection when the database connection is lost (a PostgreSQL restart): saver
        writes are upserts, so a transaction replayed after it did commit changes nothing."""
        lease = current_lease.get()
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        replay = ReplayableFlow(flow)
        fenced = write and lease is not None
        deadline = lease.ttl * 2 if lease is not None else 30.0
        try:
            return await retrying(
                partial(self._attempt, replay, lease if fenced else None),
                what="checkpoint write" if write else "checkpoint read",
                deadline=deadline,
                give_up=lambda: lease is not None and lease.lost,
            )
        except LeaseLost:
            assert lease is not None
            logger.warning(
                "run %s: a checkpoint write of stale lease epoch %d was refused",
                lease.run_id,
                lease.epoch,
            )
            lease.mark_lost()
            if self._pool:
                with contextlib.suppress(Exception):
                    await bump_counter(self.conn, "stale_writes_refused")
            raise

    async def _attempt(self, replay: ReplayableFlow[R], lease: Lease | None) -> R:
        action = None
        commit = await lease.begin_commit() if lease is not None else None
        async with (
            self._connection() as conn,
            conn.transaction(),
            conn.cursor(row_factory=self._psycopg.rows.tuple_row) as cursor,
        ):
            if lease is not None:
                action = await check_fence(cursor, lease, commit)
            result = await replay.drive(cursor)
        if action and lease is not None:
            lease.on_cancel(action)
        return result


def _fenced_flow(flow: Flow[R], lease: Lease, commit: int, actions: list[str | None]) -> Flow[R]:
    """``flow`` preceded by the fence of commit number ``commit``, in the same transaction (SQLite)."""
    rows = yield Op(_SQLITE_COMMIT, (commit, lease.run_id, lease.epoch))
    if not rows:
        lease.refused += 1
        raise LeaseLost(lease.run_id, lease.epoch)
    actions.append(rows[0][0])
    return (yield from flow)


class FencedSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` whose writes for a leased run are conditional on the lease (the
    queue is in the same database file). ``on_refused`` counts a refused write; ``on_commit``
    is told of each write transaction (``inline`` connections leave the checkpoints of the
    write-ahead log to the caller: ``liteinline.Checkpointer``).

    After ``run_inline`` (``wiring``) a transaction runs on the event loop when it can start
    at once (``liteinline``: no other connection holds the database's write lock, the saver's
    lock is free), else in a worker thread as before.
    """

    on_refused: Callable[[], Any] | None = None
    on_commit: Callable[[], None] | None = None
    inline = False

    async def _atransact(self, flow: Flow[R], write: bool) -> R:
        lease = current_lease.get()
        if not write or lease is None:
            return await self._either(flow, write)
        actions: list[str | None] = []
        commit = await lease.begin_commit()
        try:
            result = await self._either(_fenced_flow(flow, lease, commit, actions), True)
        except LeaseLost:
            logger.warning(
                "run %s: a checkpoint write of stale lease epoch %d was refused",
                lease.run_id,
                lease.epoch,
            )
            lease.mark_lost()
            if self.on_refused is not None:
                with contextlib.suppress(Exception):
                    await self.on_refused()
            raise
        if actions and actions[0]:
            lease.on_cancel(actions[0])
        return result

    def run_inline(self, on_commit: Callable[[], None]) -> None:
        """Let transactions run on the event loop when they can start at once; ``on_commit``
        (a ``liteinline.Checkpointer``) checkpoints the write-ahead log instead of the
        connection's commits. Call before the saver is used concurrently."""
        self.lock = threading.RLock()  # an inline transaction drives its flow under it
        with self.lock:
            prepare_inline(self.conn, checkpoints=False)
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.on_commit = on_commit
        self.inline = True

    async def _either(self, flow: Flow[R], write: bool) -> R:
        """``flow`` in one transaction: on the loop when it can start at once, else in a thread."""
        try:
            started = self.inline and self._begin_inline(write)
            if started:
                return self._finish_inline(flow)
            return await asyncio.to_thread(self._transact, flow, write)
        finally:
            if write and self.on_commit is not None:
                self.on_commit()

    def _begin_inline(self, write: bool) -> bool:
        """Take the saver's lock and open a transaction without waiting; whether it did (the
        lock is then held until ``_finish_inline``)."""
        if not (self._ready and self._pragmas_done) or not self.lock.acquire(blocking=False):
            return False
        conn = self.conn
        try:
            if conn.in_transaction:
                self.lock.release()
                return False
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            finally:
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.OperationalError as exc:
            self.lock.release()
            if is_busy(exc):
                return False
            raise
        except BaseException:
            self.lock.release()
            raise
        return True

    def _finish_inline(self, flow: Flow[R]) -> R:
        """Drive ``flow`` in the transaction ``_begin_inline`` opened (``_transact`` joins an open
        transaction), commit it or roll it back, and release the lock."""
        conn = self.conn
        try:
            result = self._transact(flow, True)
            conn.commit()
            return result
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        finally:
            self.lock.release()
