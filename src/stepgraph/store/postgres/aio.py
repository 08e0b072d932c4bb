"""``AsyncPostgresStore``: the PostgreSQL store on psycopg's ``AsyncConnection``/``AsyncConnectionPool``.

The sync methods also work when called from a thread other than the store's event loop
(they are scheduled on it); called on the loop itself they raise ``StoreError`` SG435.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Self

from stepgraph.checkpoint._db import AsyncPgTransactor
from stepgraph.store._sql import POSTGRES
from stepgraph.store._sqlstore import SqlStore
from stepgraph.store.base import IndexConfig, StoreError, TTLConfig
from stepgraph.store.postgres._driver import is_pool, require_psycopg

__all__ = ["AsyncPostgresStore"]


class AsyncPostgresStore(AsyncPgTransactor, SqlStore):
    """A store on a psycopg ``AsyncConnection`` (lock-serialized) or ``AsyncConnectionPool``."""

    sql = POSTGRES

    def __init__(
        self, conn: Any, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None
    ) -> None:
        self._psycopg = require_psycopg()
        super().__init__(index=index, ttl=ttl)
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
        cls, conn_string: str, *, pipeline: bool = False, pool_config: dict[str, Any] | None = None,
        index: IndexConfig | None = None, ttl: TTLConfig | None = None,
    ) -> AsyncIterator[Self]:
        """A store on a new autocommit connection to ``conn_string`` (or an
        ``AsyncConnectionPool`` with ``pool_config``), closed on exit; ``pipeline`` as in
        ``PostgresStore.from_conn_string``."""
        psycopg = require_psycopg()
        if pipeline and pool_config is not None:
            raise ValueError("AsyncPostgresStore.from_conn_string: pipeline=True needs a single "
                             "connection; pass either pipeline or pool_config")
        if pool_config is not None:
            from psycopg_pool import AsyncConnectionPool

            kwargs = {"autocommit": True, "prepare_threshold": 0, **(pool_config.get("kwargs") or {})}
            async with AsyncConnectionPool(conn_string, min_size=pool_config.get("min_size", 1),
                                           max_size=pool_config.get("max_size"), kwargs=kwargs,
                                           open=False) as pool:
                yield cls(pool, index=index, ttl=ttl)
            return
        async with await psycopg.AsyncConnection.connect(
            conn_string, autocommit=True, prepare_threshold=0
        ) as conn:
            if pipeline:
                async with conn.pipeline():
                    yield cls(conn, index=index, ttl=ttl)
            else:
                yield cls(conn, index=index, ttl=ttl)

    async def setup(self) -> None:  # type: ignore[override]
        """Create or migrate the tables (idempotent; also runs on first use)."""
        await self._amigrate()

    def _loop_misuse_error(self) -> Exception:
        return StoreError(
            "A sync method of AsyncPostgresStore was called on its own event loop "
            "(or before the store was used from one); it would block the loop.",
            code="SG435",
            hint="await the async twin (aget, aput, asearch, ...) instead",
        )
