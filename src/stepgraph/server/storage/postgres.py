"""The PostgreSQL backend: documents, checkpoints and the store share one connection pool."""

from __future__ import annotations

import logging
import select
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from stepgraph.server.storage import records
from stepgraph.server.storage.base import Backend, decode_doc
from stepgraph.server.storage.records import Row, decode_row
from stepgraph.server.storage.sqlbase import LEGACY_TABLE, TABLE, SqlDocStore
from stepgraph.server.storage.sqlquery import PG_NUL, PostgresQuery

__all__ = ["PostgresDocStore", "open_postgres"]

logger = logging.getLogger("stepgraph.server")

_C = 'COLLATE "C"'  # sort as Python compares strings (code points), not by the locale
_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    f" kind TEXT NOT NULL, id TEXT {_C} NOT NULL, thread_id TEXT,"
    f" status TEXT {_C}, created_at TEXT {_C}, updated_at TEXT {_C}, state_updated_at TEXT {_C},"
    f" name TEXT {_C}, graph_id TEXT, metadata JSONB NOT NULL DEFAULT '{{}}',"
    " doc TEXT NOT NULL, vals TEXT, large TEXT,"
    " PRIMARY KEY (kind, id))",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_thread ON {TABLE} (kind, thread_id)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_created ON {TABLE} (kind, created_at)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_metadata ON {TABLE} USING GIN (metadata jsonb_path_ops)",
)


class PostgresDocStore(SqlDocStore):
    """Documents in the records table, through a psycopg ``AsyncConnectionPool``."""

    dialect = PostgresQuery
    metadata_param = "%s::jsonb"

    def __init__(self, pool: Any) -> None:
        super().__init__()
        self.pool = pool

    def _metadata_text(self, row: Row) -> str:
        return row.metadata.replace(*PG_NUL)

    async def _fetch(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        async with self.pool.connection() as conn, conn.cursor() as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()

    async def _exec(self, sql: str, params: list[Any]) -> int:
        async with self.pool.connection() as conn, conn.cursor() as cur:
            await cur.execute(sql, params)
            return cur.rowcount

    async def update(
        self, kind: str, doc_id: str, change: Callable[[dict[str, Any]], Any], *, thread_id: str | None = None,
    ) -> dict[str, Any] | None:
        """Read with a row lock, change and write back in one transaction: updates of one
        document by several server processes are serialized too (none is lost)."""
        async with self.pool.connection() as conn, conn.transaction():
            row = await (await conn.execute(
                f"SELECT doc, vals, large FROM {TABLE} WHERE kind = %s AND id = %s FOR UPDATE",
                (kind, doc_id))).fetchone()
            if row is None:
                return None
            doc = decode_row(*row)
            result = change(doc)
            if isinstance(result, Awaitable):
                await result
            encoded = records.encode_row(kind, doc_id, doc, thread_id)
            await conn.execute(self._insert_sql(self._UPSERT), self._row_params(encoded))
            return doc

    async def setup(self) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(7362004200)")
            for stmt in _DDL:
                await conn.execute(stmt)
            found = await (await conn.execute("SELECT to_regclass(%s)", (LEGACY_TABLE,))).fetchone()
            if found and found[0] is not None:
                await self._migrate(conn)

    async def _migrate(self, conn: Any) -> None:
        """Copy the documents of the earlier one-column table, then drop it."""
        sql = self._insert_sql("DO NOTHING")
        moved = 0
        async with conn.cursor(name="sg_migrate") as cur:
            await cur.execute(f"SELECT kind, id, thread_id, doc FROM {LEGACY_TABLE}")
            async for kind, doc_id, thread_id, text in cur:
                row = records.encode_row(kind, doc_id, decode_doc(text), thread_id)
                await conn.execute(sql, self._row_params(row))
                moved += 1
        await conn.execute(f"DROP TABLE {LEGACY_TABLE}")
        logger.info("migrated %d server document(s) from %s to %s", moved, LEGACY_TABLE, TABLE)


async def check_idle_connection(conn: Any) -> None:
    """The pool's check of a connection before it is handed out, without a round trip when it
    can: one psycopg knows is closed fails at once; one whose socket is readable while idle
    (the server sent its termination notice or closed it: a restart) gets the full check (an
    empty query, ``AsyncConnectionPool.check_connection``); the others pass. A connection cut
    without a word (a network partition) is found by the statement that uses it, which the
    cluster's callers retry (``cluster/retry.py``)."""
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    try:
        readable = bool(select.select([conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        readable = True
    if readable:
        await AsyncConnectionPool.check_connection(conn)


@asynccontextmanager
async def open_postgres(url: str, *, max_size: int = 20, store_index: dict[str, Any] | None = None,
                        store_ttl: dict[str, Any] | None = None, check_connections: bool = False
                        ) -> AsyncIterator[Backend]:
    """Documents, checkpoints (``AsyncPostgresSaver``) and store (``AsyncPostgresStore``) at ``url``.

    ``check_connections``: the pool checks each connection before handing it out
    (``check_idle_connection``), so after a server restart callers wait for a working
    connection instead of failing on a dead one."""
    from psycopg_pool import AsyncConnectionPool

    from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from stepgraph.store.postgres.aio import AsyncPostgresStore

    pool = AsyncConnectionPool(
        url, min_size=1, max_size=max_size, open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0},
        check=check_idle_connection if check_connections else None,
    )
    await pool.open(wait=True, timeout=10)
    try:
        docs = PostgresDocStore(pool)
        await docs.setup()
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        store = AsyncPostgresStore(pool, index=store_index, ttl=store_ttl)
        await store.setup()
        yield Backend("postgres", docs, saver, store, _redact(url))
    finally:
        await pool.close()


def _redact(url: str) -> str:
    """``url`` without its password."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{host}"
