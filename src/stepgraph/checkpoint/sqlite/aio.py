"""``AsyncSqliteSaver``: ``SqliteSaver`` for asyncio code, without aiosqlite.

Each call runs its SQL in a worker thread (``asyncio.to_thread``) under the saver's
connection lock, so the event loop never blocks on disk I/O. The sync methods keep working.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Self

from stepgraph.checkpoint.sqlite import SqliteSaver, connect

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["AsyncSqliteSaver"]


class AsyncSqliteSaver(SqliteSaver):
    """A ``SqliteSaver`` whose ``from_conn_string`` and ``setup`` are async."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[Self]:
        """A saver on the database file ``conn_string`` (or ``":memory:"``), closed on exit."""
        conn = await asyncio.to_thread(connect, conn_string)
        try:
            yield cls(conn, serde=serde)
        finally:
            await asyncio.to_thread(conn.close)

    async def setup(self) -> None:  # type: ignore[override]
        """Create or migrate the tables (idempotent; also runs on first use)."""
        await self._amigrate()
