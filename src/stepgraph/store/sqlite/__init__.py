"""``SqliteStore``: a durable store in one SQLite file (stdlib ``sqlite3`` only).

The file is put in WAL mode with a busy timeout, so several threads (one lock around the
connection) and several processes can share it; every batch is one transaction (batches that
may write, including reads that restart TTLs, take the write lock with ``BEGIN IMMEDIATE``).
Async methods run the SQL in a worker thread, so no extra package (aiosqlite) is needed.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Self

from stepgraph.checkpoint._flows import Flow, R, drive, execute
from stepgraph.store._sql import SQLITE
from stepgraph.store._sqlstore import SqlStore
from stepgraph.store.base import IndexConfig, TTLConfig

__all__ = ["SqliteStore", "connect"]

BUSY_TIMEOUT_MS = 30_000


def connect(path: str) -> sqlite3.Connection:
    """A connection usable from any thread, in autocommit mode (transactions are explicit)."""
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None)


class SqliteStore(SqlStore):
    """A store on a ``sqlite3.Connection``; tables (``sg_store*``) are created on first use.

    Pass a connection made with ``check_same_thread=False`` if the store is used from more
    than one thread (``from_conn_string`` does). If the connection is already inside a
    transaction, the store's statements join it and committing is left to the caller.
    """

    sql = SQLITE

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        super().__init__(index=index, ttl=ttl)
        self.conn = conn
        self.lock = threading.Lock()
        self._pragmas_done = False

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> Iterator[Self]:
        """A store on the database file ``conn_string`` (or ``":memory:"``), closed on exit."""
        conn = connect(conn_string)
        try:
            yield cls(conn, index=index, ttl=ttl)
        finally:
            conn.close()

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; also runs on first use)."""
        self._migrate()

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
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not conn.in_transaction:
            # Switching a fresh file to WAL needs an exclusive lock, which SQLite may refuse
            # at once (no busy wait) while another process opens the same file.
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
        self._pragmas_done = True
