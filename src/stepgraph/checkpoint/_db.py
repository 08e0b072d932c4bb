"""Connection plumbing shared by the SQL savers and the SQL stores.

Each class here runs a sans-IO ``Flow`` (``_flows.py``) in one transaction on its database:
``SqliteTransactor`` on a ``sqlite3`` connection guarded by a lock, ``PgTransactor`` and
``AsyncPgTransactor`` on a psycopg connection or pool. Savers and stores mix them in, so
WAL set-up, locking and the sync-on-async-loop guard are written once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any

from stepgraph.checkpoint._flows import Flow, R, adrive, aexecute, drive, execute

BUSY_TIMEOUT_MS = 30_000


class SqliteTransactor:
    """Runs flows in ``BEGIN``/``BEGIN IMMEDIATE`` transactions on ``self.conn``."""

    conn: Any
    lock: Any
    _pragmas_done: bool
    _wal_tuning = True

    def _transact(self, flow: Flow[R], write: bool) -> R:
        with self.lock:
            conn = self.conn
            if not self._pragmas_done:
                self._apply_pragmas()
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            cursor = conn.cursor()
            cursor.row_factory = None
            try:
                result = drive(flow, partial(execute, cursor))
                if own:
                    conn.commit()
            except BaseException:
                if own and conn.in_transaction:
                    conn.rollback()
                raise
            finally:
                cursor.close()
            return result

    def _apply_pragmas(self) -> None:
        import sqlite3

        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not conn.in_transaction:
            # Switching a fresh file to WAL needs an exclusive lock and SQLite may refuse it
            # at once (no busy wait) while another process is opening the same file.
            deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
            while True:
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.005)
            conn.execute("PRAGMA synchronous = NORMAL")
            if self._wal_tuning:
                conn.execute("PRAGMA wal_autocheckpoint = 256")
                conn.execute("PRAGMA journal_size_limit = 1048576")
        self._pragmas_done = True


class PgTransactor:
    """Runs flows in a psycopg transaction on a connection (locked) or a pool."""

    conn: Any
    lock: Any
    _pool: bool
    _psycopg: Any

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if self._pool:
            with self.conn.connection() as conn:
                yield conn
        else:
            with self.lock:
                yield self.conn

    def _transact(self, flow: Flow[R], write: bool) -> R:
        with (
            self._connection() as conn,
            conn.transaction(),
            conn.cursor(row_factory=self._psycopg.rows.tuple_row) as cursor,
        ):
            return drive(flow, partial(execute, cursor))


class AsyncPgTransactor:
    """Async twin of ``PgTransactor``; its sync methods hop onto the saver's event loop."""

    conn: Any
    lock: Any
    loop: asyncio.AbstractEventLoop | None
    _pool: bool
    _psycopg: Any

    def _loop_misuse_error(self) -> Exception:  # pragma: no cover - overridden
        raise NotImplementedError

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        if self._pool:
            async with self.conn.connection() as conn:
                yield conn
        else:
            async with self.lock:
                yield self.conn

    async def _atransact(self, flow: Flow[R], write: bool) -> R:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        async with (
            self._connection() as conn,
            conn.transaction(),
            conn.cursor(row_factory=self._psycopg.rows.tuple_row) as cursor,
        ):
            return await adrive(flow, partial(aexecute, cursor))

    def _transact(self, flow: Flow[R], write: bool) -> R:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None or running is self.loop:
            raise self._loop_misuse_error()
        return asyncio.run_coroutine_threadsafe(self._atransact(flow, write), self.loop).result()
