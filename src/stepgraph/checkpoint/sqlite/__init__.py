"""``SqliteSaver``: durable checkpoints in one SQLite file (stdlib ``sqlite3`` only).

The file is put in WAL mode with a busy timeout, so several threads (one lock around the
connection) and several processes (SQLite's own file locks; writes use ``BEGIN IMMEDIATE``)
can share it. Every ``put`` and ``put_writes`` is one transaction. ``synchronous=NORMAL``:
a process crash never loses or half-writes a committed checkpoint; a power cut may lose the
last few. The WAL is checkpointed every 256 pages and trimmed to 1 MiB, so it stays small.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Self

from stepgraph.checkpoint._db import SqliteTransactor
from stepgraph.checkpoint._sql import SQLITE
from stepgraph.checkpoint._sqlsaver import SqlSaver

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["SqliteSaver", "connect"]



def connect(path: str) -> sqlite3.Connection:
    """A connection usable from any thread, in autocommit mode (transactions are explicit)."""
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None)


class SqliteSaver(SqliteTransactor, SqlSaver):
    """A saver on a ``sqlite3.Connection``; the schema is created on first use.

    Pass a connection made with ``check_same_thread=False`` if the saver is used from more than
    one thread (``from_conn_string`` does). Async methods run the SQL in a worker thread. If
    the connection is already inside a transaction, the saver's statements join it and
    committing is left to the caller.
    """

    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None):
        super().__init__(serde=serde)
        self.conn = conn
        self.lock = threading.Lock()
        self._pragmas_done = False

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, serde: SerializerProtocol | None = None
    ) -> Iterator[Self]:
        """A saver on the database file ``conn_string`` (or ``":memory:"``), closed on exit."""
        conn = connect(conn_string)
        try:
            yield cls(conn, serde=serde)
        finally:
            conn.close()

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; also runs on first use)."""
        self._migrate()
