"""``PostgresStore`` and ``AsyncPostgresStore``: durable stores in PostgreSQL, on psycopg 3.

Give a store a psycopg ``Connection`` (calls are serialized by a lock; ``autocommit=True`` is
recommended, as ``from_conn_string`` does) or a ``psycopg_pool.ConnectionPool`` (each call
borrows a connection). Every batch runs in one transaction. Tables (``sg_store*``) are
created on first use or by ``setup()`` (versioned, serialized across processes by an advisory
lock). Vectors are float32 ``BYTEA`` and ranked in Python: pgvector is not needed. psycopg
is imported when a store is created; install it with ``pip install 'stepgraph[postgres]'``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Self

from stepgraph.checkpoint._db import PgTransactor
from stepgraph.store._sql import POSTGRES
from stepgraph.store._sqlstore import SqlStore
from stepgraph.store.base import IndexConfig, TTLConfig
from stepgraph.store.postgres._driver import is_pool, require_psycopg
from stepgraph.store.postgres.aio import AsyncPostgresStore

__all__ = ["AsyncPostgresStore", "PostgresStore"]


class PostgresStore(PgTransactor, SqlStore):
    """A store on a psycopg ``Connection`` or ``ConnectionPool``; async methods use a thread."""

    sql = POSTGRES

    def __init__(
        self, conn: Any, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> None:
        self._psycopg = require_psycopg()
        super().__init__(index=index, ttl=ttl)
        self.conn = conn
        self.lock = threading.Lock()
        self._pool = is_pool(conn)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, pipeline: bool = False, pool_config: dict[str, Any] | None = None,
        index: IndexConfig | None = None, ttl: TTLConfig | None = None,
    ) -> Iterator[Self]:
        """A store on a new autocommit connection to ``conn_string`` (or, with ``pool_config``
        as LangGraph's ``PoolConfig``: ``min_size``, ``max_size``, ``kwargs``, a
        ``ConnectionPool``), closed on exit. ``pipeline=True`` runs the connection in
        psycopg's pipeline mode (statements are sent without waiting for each answer); it
        needs a single connection, so it is refused together with ``pool_config``."""
        psycopg = require_psycopg()
        if pipeline and pool_config is not None:
            raise ValueError("PostgresStore.from_conn_string: pipeline=True needs a single connection; "
                             "pass either pipeline or pool_config")
        if pool_config is not None:
            from psycopg_pool import ConnectionPool

            kwargs = {"autocommit": True, "prepare_threshold": 0, **(pool_config.get("kwargs") or {})}
            with ConnectionPool(conn_string, min_size=pool_config.get("min_size", 1),
                                max_size=pool_config.get("max_size"), kwargs=kwargs, open=True) as pool:
                yield cls(pool, index=index, ttl=ttl)
            return
        with psycopg.Connection.connect(conn_string, autocommit=True, prepare_threshold=0) as conn:
            if pipeline:
                with conn.pipeline():
                    yield cls(conn, index=index, ttl=ttl)
            else:
                yield cls(conn, index=index, ttl=ttl)

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; also runs on first use)."""
        self._migrate()
