"""``SqlStore``: a ``PlannedStore`` that runs each batch as one SQL flow, in one transaction.

A subclass provides ``_transact(flow, write)`` (run a flow in one transaction and return its
result) and may override ``_atransact``, which by default runs ``_transact`` in a worker
thread. The schema is migrated on first use (``setup()`` does it explicitly).
"""

from __future__ import annotations

import asyncio

from stepgraph.checkpoint._flows import Flow, R, migrate
from stepgraph.store._core import BatchPlan, PlannedStore
from stepgraph.store._sql import StoreSQL, run_plan
from stepgraph.store.base import IndexConfig, Result, TTLConfig

__all__ = ["SqlStore"]


class SqlStore(PlannedStore):
    """A store on a SQL database (see ``stepgraph.store._sql`` for the schema)."""

    sql: StoreSQL

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None):
        super().__init__(index=index, ttl=ttl)
        self._ready = False

    # --- I/O, provided by subclasses ----------------------------------------------------
    def _transact(self, flow: Flow[R], write: bool) -> R:
        """Run ``flow`` in one transaction (``write``: it may change rows)."""
        raise NotImplementedError

    async def _atransact(self, flow: Flow[R], write: bool) -> R:
        """Async ``_transact``; by default the sync one in a worker thread."""
        return await asyncio.to_thread(self._transact, flow, write)

    def _migrate(self) -> None:
        self._transact(migrate(self.sql), True)
        self._ready = True

    async def _amigrate(self) -> None:
        await self._atransact(migrate(self.sql), True)
        self._ready = True

    def _execute(self, plan: BatchPlan) -> list[Result]:
        if not self._ready:
            self._migrate()
        return self._transact(run_plan(self.sql, plan), plan.write)

    async def _aexecute(self, plan: BatchPlan) -> list[Result]:
        if not self._ready:
            await self._amigrate()
        return await self._atransact(run_plan(self.sql, plan), plan.write)
