"""``AsyncPostgresSaver``: ``PostgresSaver`` on psycopg's ``AsyncConnection``/``AsyncConnectionPool``.

The sync methods also work when called from a thread other than the saver's event loop
(they are scheduled on it); called on the loop itself they raise ``SaverError`` SG415.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Self

from stepgraph.checkpoint._db import AsyncPgTransactor
from stepgraph.checkpoint._sql import POSTGRES
from stepgraph.checkpoint._sqlsaver import SqlSaver
from stepgraph.checkpoint.base import SaverError
from stepgraph.checkpoint.postgres._driver import is_pool, require_psycopg

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["AsyncPostgresSaver"]


class AsyncPostgresSaver(AsyncPgTransactor, SqlSaver):
    """A saver on a psycopg ``AsyncConnection`` (lock-serialized) or ``AsyncConnectionPool``."""

    dialect = POSTGRES

    def __init__(self, conn: Any, *, serde: SerializerProtocol | None = None) -> None:
        self._psycopg = require_psycopg()
        super().__init__(serde=serde)
        self.conn = conn
        self.lock = asyncio.Lock()
        self._pool = is_pool(conn)
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[Self]:
        """A saver on a new autocommit connection to ``conn_string``, closed on exit."""
        psycopg = require_psycopg()
        async with await psycopg.AsyncConnection.connect(
            conn_string, autocommit=True, prepare_threshold=0
        ) as conn:
            yield cls(conn, serde=serde)

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent; also runs on first use)."""
        await self._amigrate()

    def _loop_misuse_error(self) -> Exception:
        return SaverError(
            "A sync method of AsyncPostgresSaver was called on its own event loop "
            "(or before the saver was used from one); it would block the loop.",
            code="SG415",
            hint="await the async twin (aget_tuple, aput, alist, ...) instead",
        )
