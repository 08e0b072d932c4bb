"""The PostgreSQL backend: documents, checkpoints and the store share one connection pool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from stepgraph.server.storage.base import Backend, DocStore, decode_doc, encode_doc

__all__ = ["PostgresDocStore", "open_postgres"]

_DDL = (
    "CREATE TABLE IF NOT EXISTS sg_server_docs ("
    " kind TEXT NOT NULL, id TEXT NOT NULL, thread_id TEXT, doc TEXT NOT NULL,"
    " PRIMARY KEY (kind, id))",
    "CREATE INDEX IF NOT EXISTS sg_server_docs_thread ON sg_server_docs (kind, thread_id)",
)


class PostgresDocStore(DocStore):
    """Documents in an ``sg_server_docs`` table, through a psycopg ``AsyncConnectionPool``."""

    def __init__(self, pool: Any) -> None:
        super().__init__()
        self.pool = pool

    async def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self.pool.connection() as conn, conn.cursor() as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()

    async def _exec(self, sql: str, params: tuple[Any, ...]) -> int:
        async with self.pool.connection() as conn, conn.cursor() as cur:
            await cur.execute(sql, params)
            return cur.rowcount

    async def setup(self) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(7362004200)")
            for stmt in _DDL:
                await conn.execute(stmt)

    async def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        rows = await self._fetch("SELECT doc FROM sg_server_docs WHERE kind = %s AND id = %s", (kind, doc_id))
        return decode_doc(rows[0][0]) if rows else None

    async def insert(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> bool:
        n = await self._exec(
            "INSERT INTO sg_server_docs (kind, id, thread_id, doc) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (kind, id) DO NOTHING", (kind, doc_id, thread_id, encode_doc(doc)))
        return n == 1

    async def put(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> None:
        await self._exec(
            "INSERT INTO sg_server_docs (kind, id, thread_id, doc) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (kind, id) DO UPDATE SET doc = excluded.doc, "
            "thread_id = COALESCE(excluded.thread_id, sg_server_docs.thread_id)",
            (kind, doc_id, thread_id, encode_doc(doc)))

    async def delete(self, kind: str, doc_id: str) -> bool:
        return await self._exec("DELETE FROM sg_server_docs WHERE kind = %s AND id = %s", (kind, doc_id)) > 0

    async def delete_for_thread(self, kind: str, thread_id: str) -> int:
        return await self._exec(
            "DELETE FROM sg_server_docs WHERE kind = %s AND thread_id = %s", (kind, thread_id))

    async def list(self, kind: str, *, thread_id: str | None = None) -> list[dict[str, Any]]:
        if thread_id is None:
            rows = await self._fetch("SELECT doc FROM sg_server_docs WHERE kind = %s", (kind,))
        else:
            rows = await self._fetch(
                "SELECT doc FROM sg_server_docs WHERE kind = %s AND thread_id = %s", (kind, thread_id))
        return [decode_doc(r[0]) for r in rows]


@asynccontextmanager
async def open_postgres(url: str, *, max_size: int = 20) -> AsyncIterator[Backend]:
    """Documents, checkpoints (``AsyncPostgresSaver``) and store (``AsyncPostgresStore``) at ``url``."""
    from psycopg_pool import AsyncConnectionPool

    from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from stepgraph.store.postgres.aio import AsyncPostgresStore

    pool = AsyncConnectionPool(
        url, min_size=1, max_size=max_size, open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0},
    )
    await pool.open(wait=True, timeout=10)
    try:
        docs = PostgresDocStore(pool)
        await docs.setup()
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        store = AsyncPostgresStore(pool)
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
