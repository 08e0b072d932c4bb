"""``PostgresSaver``: durable checkpoints in PostgreSQL, on psycopg 3.

Give it a ``psycopg.Connection`` (calls are serialized by a lock; ``autocommit=True`` is
recommended, as ``from_conn_string`` does) or a ``psycopg_pool.ConnectionPool`` (each call
borrows a connection). Every call runs in one transaction; ``put`` stores the checkpoint row
and all its blobs atomically. Tables are created on first use or by ``setup()`` (versioned,
serialized across processes by an advisory lock). Install with ``pip install 'stepgraph[postgres]'``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self

from stepgraph.checkpoint._db import PgTransactor
from stepgraph.checkpoint._sql import POSTGRES
from stepgraph.checkpoint._sqlsaver import SqlSaver
from stepgraph.checkpoint.postgres._driver import is_pool, require_psycopg

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["PostgresSaver"]


class PostgresSaver(PgTransactor, SqlSaver):
    """A saver on a psycopg ``Connection`` or ``ConnectionPool``; async methods use a thread."""

    dialect = POSTGRES

    def __init__(self, conn: Any, *, serde: SerializerProtocol | None = None) -> None:
        self._psycopg = require_psycopg()
        super().__init__(serde=serde)
        self.conn = conn
        self.lock = threading.Lock()
        self._pool = is_pool(conn)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, serde: SerializerProtocol | None = None
    ) -> Iterator[Self]:
        """A saver on a new autocommit connection to ``conn_string``, closed on exit."""
        psycopg = require_psycopg()
        with psycopg.Connection.connect(conn_string, autocommit=True, prepare_threshold=0) as conn:
            yield cls(conn, serde=serde)

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; also runs on first use)."""
        self._migrate()
