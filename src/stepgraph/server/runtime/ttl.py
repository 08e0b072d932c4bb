"""Thread time to live: the policy of ``checkpointer.ttl`` and the sweeper that applies it.

A thread's TTL comes from the ``ttl`` of ``POST /threads`` / ``PATCH /threads/{id}`` (minutes,
or ``{"strategy", "ttl"}``) or, when the request gives none, from ``checkpointer.ttl.default_ttl``.
It is stored on the thread record as ``_ttl`` (``{"strategy", "minutes"}``) and counts from the
thread's last update (``updated_at``: runs, state updates and patches all move it), so an active
conversation does not expire. Every ``sweep_interval_minutes`` the sweeper takes at most
``sweep_limit`` expired threads that are not busy and applies the strategy: ``delete`` removes the
thread with its runs and checkpoints; ``keep_latest`` keeps the thread and the latest checkpoint
of each namespace and deletes the older ones (once per expiry: the thread is not touched again
until it is updated).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from stepgraph.server.runtime.background import BackgroundTask

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["ThreadTtlPolicy", "TtlSweeper", "expired", "ttl_record"]

logger = logging.getLogger("stepgraph.server")

Strategy = Literal["delete", "keep_latest"]
DEFAULT_SWEEP_MINUTES = 5.0
DEFAULT_SWEEP_LIMIT = 1000


@dataclass(frozen=True)
class ThreadTtlPolicy:
    """``checkpointer.ttl`` as the server applies it."""

    strategy: Strategy = "delete"
    default_minutes: float | None = None
    sweep_interval_minutes: float = DEFAULT_SWEEP_MINUTES
    sweep_limit: int = DEFAULT_SWEEP_LIMIT

    @classmethod
    def from_config(cls, ttl: Any) -> ThreadTtlPolicy:
        """From the parsed ``checkpointer.ttl`` section (``None``: no default TTL)."""
        if ttl is None:
            return cls()
        return cls(strategy=ttl.strategy or "delete", default_minutes=ttl.default_ttl,
                   sweep_interval_minutes=float(ttl.sweep_interval_minutes or DEFAULT_SWEEP_MINUTES),
                   sweep_limit=ttl.sweep_limit or DEFAULT_SWEEP_LIMIT)


def ttl_record(requested: Any, policy: ThreadTtlPolicy) -> dict[str, Any] | None:
    """The ``_ttl`` to store for a request's ``ttl`` (a number, a ``ThreadTtl`` model or ``None``)."""
    if requested is None:
        if policy.default_minutes is None:
            return None
        return {"strategy": policy.strategy, "minutes": policy.default_minutes}
    if isinstance(requested, (int, float)):
        return {"strategy": policy.strategy, "minutes": float(requested)}
    minutes = requested.ttl if requested.ttl is not None else policy.default_minutes
    if minutes is None:
        return None
    return {"strategy": requested.strategy or policy.strategy, "minutes": float(minutes)}


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def expired(doc: dict[str, Any], now: datetime) -> Strategy | None:
    """The strategy to apply to thread record ``doc`` at ``now``, or ``None`` when it is alive."""
    ttl = doc.get("_ttl")
    if not isinstance(ttl, dict) or doc.get("status") == "busy":
        return None
    updated = _parse_time(doc.get("updated_at"))
    if updated is None:
        return None
    if updated + timedelta(minutes=float(ttl.get("minutes", 0))) > now:
        return None
    strategy = ttl.get("strategy", "delete")
    if strategy == "keep_latest" and doc.get("_ttl_pruned") == doc.get("updated_at"):
        return None
    return "keep_latest" if strategy == "keep_latest" else "delete"


class TtlSweeper:
    """Applies thread TTLs every ``sweep_interval_minutes`` while the server runs."""

    def __init__(self, ctx: ServerContext, policy: ThreadTtlPolicy) -> None:
        self.ctx = ctx
        self.policy = policy
        self._background = BackgroundTask("stepgraph-ttl-sweeper", self._loop)

    async def sweep(self, now: datetime | None = None) -> dict[str, int]:
        """One pass: ``{"deleted": n, "pruned": m}``."""
        from stepgraph.server.checkpoints import keep_latest_checkpoints

        now = now or datetime.now(UTC)
        deleted = pruned = 0
        for doc in await self.ctx.threads.with_ttl():
            if deleted + pruned >= self.policy.sweep_limit:
                break
            strategy = expired(doc, now)
            if strategy is None:
                continue
            thread_id = doc["thread_id"]
            if await self.ctx.service.busy(thread_id):
                continue
            if strategy == "delete":
                await self.ctx.service.delete_thread_data(thread_id)
                deleted += 1
            else:
                await keep_latest_checkpoints(self.ctx.backend.saver, thread_id)
                await self.ctx.threads.mark_pruned(thread_id, doc.get("updated_at"))
                pruned += 1
        if deleted or pruned:
            logger.info("thread TTL sweep: %d deleted, %d pruned to their latest checkpoint", deleted, pruned)
        return {"deleted": deleted, "pruned": pruned}

    async def _loop(self) -> None:
        interval = max(self.policy.sweep_interval_minutes * 60.0, 0.05)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sweep()
            except Exception:  # a failed sweep is retried at the next interval
                logger.exception("thread TTL sweep failed")

    def start(self) -> None:
        """Run the sweeper in the background."""
        self._background.start()

    async def stop(self) -> None:
        """Stop the background sweeper."""
        await self._background.stop()
