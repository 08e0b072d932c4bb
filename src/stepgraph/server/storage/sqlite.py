"""The SQLite backend: one database file holds documents, checkpoints and the store."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from stepgraph.server.storage import records
from stepgraph.server.storage.base import Backend, decode_doc
from stepgraph.server.storage.liteinline import is_busy, prepare_inline, waiting
from stepgraph.server.storage.sqlbase import LEGACY_TABLE, TABLE, SqlDocStore
from stepgraph.server.storage.sqlquery import SqliteQuery

__all__ = ["SqliteDocStore", "open_sqlite"]

T = TypeVar("T")
logger = logging.getLogger("stepgraph.server")

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " kind TEXT NOT NULL, id TEXT NOT NULL, thread_id TEXT,"
    " status TEXT, created_at TEXT, updated_at TEXT, state_updated_at TEXT, name TEXT, graph_id TEXT,"
    " metadata TEXT NOT NULL DEFAULT '{}', doc TEXT NOT NULL, vals TEXT, large TEXT,"
    " PRIMARY KEY (kind, id))",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_thread ON {TABLE} (kind, thread_id)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_created ON {TABLE} (kind, created_at)",
)


def _lower(text: Any) -> Any:
    return text.lower() if isinstance(text, str) else text


class SqliteDocStore(SqlDocStore):
    """Documents in the records table, on one connection. A statement runs on the calling
    thread unless the connection is in use or the database is locked: then in a worker
    thread, waiting for the lock (``liteinline``)."""

    dialect = SqliteQuery

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
        prepare_inline(self.conn, checkpoints=True)
        # Python's lower() (Unicode), as name searches always did
        self.conn.create_function("sg_lower", 1, _lower, deterministic=True)
        self.sql_lock = threading.Lock()

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self.sql_lock.acquire(blocking=False):
            try:
                return fn(self.conn)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
            finally:
                self.sql_lock.release()

        def call() -> T:
            with self.sql_lock:
                return waiting(self.conn, lambda: fn(self.conn))

        return await asyncio.to_thread(call)

    async def _fetch(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        return await self._run(lambda c: c.execute(sql, params).fetchall())

    async def _exec(self, sql: str, params: list[Any]) -> int:
        return await self._run(lambda c: c.execute(sql, params).rowcount)

    async def setup(self) -> None:
        await self._run(self._setup)

    def _setup(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _DDL:
                conn.execute(stmt)
            legacy = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (LEGACY_TABLE,)
            ).fetchone()
            if legacy:
                self._migrate(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # not when BEGIN itself was refused (busy)
                conn.execute("ROLLBACK")
            raise

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Copy the documents of the earlier one-column table, then drop it."""
        cur = conn.execute(f"SELECT kind, id, thread_id, doc FROM {LEGACY_TABLE}")
        sql = self._insert_sql("DO NOTHING")
        moved = 0
        while batch := cur.fetchmany(200):
            for kind, doc_id, thread_id, text in batch:
                row = records.encode_row(kind, doc_id, decode_doc(text), thread_id)
                conn.execute(sql, self._row_params(row))
                moved += 1
        conn.execute(f"DROP TABLE {LEGACY_TABLE}")
        logger.info("migrated %d server document(s) from %s to %s", moved, LEGACY_TABLE, TABLE)

    async def close(self) -> None:
        await self._run(lambda c: c.close())


@asynccontextmanager
async def open_sqlite(
    path: str | Path,
    *,
    store_index: dict[str, Any] | None = None,
    store_ttl: dict[str, Any] | None = None,
) -> AsyncIterator[Backend]:
    """Documents, checkpoints (``AsyncSqliteSaver``) and store (``AsyncSqliteStore``) in ``path``."""
    from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from stepgraph.store.sqlite.aio import AsyncSqliteStore

    path = str(path)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    docs = SqliteDocStore(path)
    await docs.setup()
    try:
        async with (
            AsyncSqliteSaver.from_conn_string(path) as saver,
            AsyncSqliteStore.from_conn_string(path, index=store_index, ttl=store_ttl) as store,
        ):
            await saver.setup()
            await store.setup()
            yield Backend("sqlite", docs, saver, store, path)
    finally:
        await docs.close()
