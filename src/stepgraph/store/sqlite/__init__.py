"""``SqliteStore``: a durable store in one SQLite file (stdlib ``sqlite3`` only).

The file is put in WAL mode with a busy timeout, so several threads (one lock around the
connection) and several processes can share it; every batch is one transaction (batches that
may write, including reads that restart TTLs, take the write lock with ``BEGIN IMMEDIATE``).
Async methods run the SQL in a worker thread, so no extra package (aiosqlite) is needed.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Self

from stepgraph.checkpoint._db import SqliteTransactor
from stepgraph.store._sql import SQLITE
from stepgraph.store._sqlstore import SqlStore
from stepgraph.store.base import IndexConfig, TTLConfig

__all__ = ["SqliteStore", "connect"]



def connect(path: str) -> sqlite3.Connection:
    """A connection usable from any thread, in autocommit mode (transactions are explicit)."""
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None)


class SqliteStore(SqliteTransactor, SqlStore):
    _wal_tuning = False

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
