"""The SQLite backend: one database file holds documents, checkpoints and the store."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from stepgraph.server.storage.base import Backend, DocStore, decode_doc, encode_doc

__all__ = ["SqliteDocStore", "open_sqlite"]

T = TypeVar("T")

_DDL = (
    "CREATE TABLE IF NOT EXISTS sg_server_docs ("
    " kind TEXT NOT NULL, id TEXT NOT NULL, thread_id TEXT, doc TEXT NOT NULL,"
    " PRIMARY KEY (kind, id))",
    "CREATE INDEX IF NOT EXISTS sg_server_docs_thread ON sg_server_docs (kind, thread_id)",
)


class SqliteDocStore(DocStore):
    """Documents in an ``sg_server_docs`` table; SQL runs in a worker thread."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 30000")
        for attempt in range(200):  # switching to WAL is refused, not waited for, while locked
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 199:
                    raise
                time.sleep(0.01)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.sql_lock = threading.Lock()

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            with self.sql_lock:
                return fn(self.conn)

        return await asyncio.to_thread(call)

    async def setup(self) -> None:
        def ddl(conn: sqlite3.Connection) -> None:
            for stmt in _DDL:
                conn.execute(stmt)

        await self._run(ddl)

    async def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        rows = await self._run(lambda c: c.execute(
            "SELECT doc FROM sg_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)).fetchall())
        return decode_doc(rows[0][0]) if rows else None

    async def insert(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> bool:
        text = encode_doc(doc)
        cur = await self._run(lambda c: c.execute(
            "INSERT OR IGNORE INTO sg_server_docs (kind, id, thread_id, doc) VALUES (?, ?, ?, ?)",
            (kind, doc_id, thread_id, text)))
        return cur.rowcount == 1

    async def put(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> None:
        text = encode_doc(doc)
        await self._run(lambda c: c.execute(
            "INSERT INTO sg_server_docs (kind, id, thread_id, doc) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (kind, id) DO UPDATE SET doc = excluded.doc, "
            "thread_id = COALESCE(excluded.thread_id, sg_server_docs.thread_id)",
            (kind, doc_id, thread_id, text)))

    async def delete(self, kind: str, doc_id: str) -> bool:
        cur = await self._run(lambda c: c.execute(
            "DELETE FROM sg_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)))
        return cur.rowcount > 0

    async def delete_for_thread(self, kind: str, thread_id: str) -> int:
        cur = await self._run(lambda c: c.execute(
            "DELETE FROM sg_server_docs WHERE kind = ? AND thread_id = ?", (kind, thread_id)))
        return cur.rowcount

    async def list(self, kind: str, *, thread_id: str | None = None) -> list[dict[str, Any]]:
        if thread_id is None:
            rows = await self._run(lambda c: c.execute(
                "SELECT doc FROM sg_server_docs WHERE kind = ?", (kind,)).fetchall())
        else:
            rows = await self._run(lambda c: c.execute(
                "SELECT doc FROM sg_server_docs WHERE kind = ? AND thread_id = ?", (kind, thread_id)).fetchall())
        return [decode_doc(r[0]) for r in rows]

    async def close(self) -> None:
        await self._run(lambda c: c.close())


@asynccontextmanager
async def open_sqlite(path: str | Path) -> AsyncIterator[Backend]:
    """Documents, checkpoints (``AsyncSqliteSaver``) and store (``AsyncSqliteStore``) in ``path``."""
    from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from stepgraph.store.sqlite.aio import AsyncSqliteStore

    path = str(path)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    docs = SqliteDocStore(path)
    await docs.setup()
    try:
        async with AsyncSqliteSaver.from_conn_string(path) as saver, \
                AsyncSqliteStore.from_conn_string(path) as store:
            await saver.setup()
            await store.setup()
            yield Backend("sqlite", docs, saver, store, path)
    finally:
        await docs.close()
