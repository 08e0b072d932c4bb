"""``AsyncSqliteStore``: ``SqliteStore`` for asyncio code, without aiosqlite.

Each call runs its SQL in a worker thread under the store's connection lock, so the event
loop never blocks on disk I/O. The sync methods keep working.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Self

from stepgraph.store.base import IndexConfig, TTLConfig
from stepgraph.store.sqlite import SqliteStore, connect

__all__ = ["AsyncSqliteStore"]


class AsyncSqliteStore(SqliteStore):
    """A ``SqliteStore`` whose ``from_conn_string`` and ``setup`` are async."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> AsyncIterator[Self]:
        """A store on the database file ``conn_string`` (or ``":memory:"``), closed on exit."""
        conn = await asyncio.to_thread(connect, conn_string)
        try:
            yield cls(conn, index=index, ttl=ttl)
        finally:
            await asyncio.to_thread(conn.close)

    async def setup(self) -> None:  # type: ignore[override]
        """Create or migrate the tables (idempotent; also runs on first use)."""
        await self._amigrate()
