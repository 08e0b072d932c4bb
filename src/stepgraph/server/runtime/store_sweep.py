"""``store.ttl.sweep_interval_minutes``: delete the store's expired items in the background.

Reads never return an expired item (each store checks expiry as it reads); the sweep frees
their rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["sweeping"]

logger = logging.getLogger("stepgraph.server")


@contextlib.asynccontextmanager
async def sweeping(store: Any, minutes: float | None) -> AsyncIterator[None]:
    """Sweep ``store`` every ``minutes`` while the block runs (nothing when ``None``)."""
    if minutes is None or not hasattr(store, "asweep_ttl"):
        yield
        return

    async def loop() -> None:
        while True:
            await asyncio.sleep(max(minutes * 60.0, 0.01))
            try:
                swept = await store.asweep_ttl()
            except Exception:  # a failed sweep is retried at the next interval
                logger.exception("store TTL sweep failed")
                continue
            if swept:
                logger.info("store TTL sweep: %d expired item(s) deleted", swept)

    task = asyncio.create_task(loop(), name="stepgraph-store-ttl")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
