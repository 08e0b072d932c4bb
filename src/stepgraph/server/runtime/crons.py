"""``CronScheduler``: fires the stored crons on schedule while the server runs.

It sleeps until the soonest next run date of an enabled cron (at most ``poll_seconds``, so
crons created by another process on the same database are seen too; a create or patch here
wakes it at once), then, for each due cron, claims the firing (``Crons.claim``: the next run
date moves on in one compare-and-swap) and, only when it won the claim, creates the run as a
client would: on the cron's thread, or on a new thread per firing for a stateless cron
(deleted when its run ends unless ``on_run_completed`` is ``"keep"``). A firing missed while
the server was down is made once at start-up, never once per missed slot; a firing whose run
cannot be created (its assistant was deleted, the thread is busy with ``reject``...) is logged
and skipped. With auth, the run is authorized as the user who created the cron.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.background import BackgroundTask

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["DEFAULT_POLL_SECONDS", "CronScheduler", "run_body"]

logger = logging.getLogger("stepgraph.server")

DEFAULT_POLL_SECONDS = 10.0
"""How often the database is looked at when no cron of this process is due sooner
(``STEPGRAPH_CRON_POLL_SECONDS``)."""


def run_body(cron: dict[str, Any]) -> dict[str, Any]:
    """The run-creation body of one firing of ``cron``."""
    payload = cron.get("payload") or {}
    body = {k: v for k, v in payload.items() if k not in ("schedule", "end_time", "timezone", "enabled",
                                                          "on_run_completed")}
    body["assistant_id"] = cron["assistant_id"]
    metadata = {**(body.get("metadata") or {}), **(cron.get("metadata") or {}), "cron_id": cron["cron_id"]}
    body["metadata"] = metadata
    if cron.get("thread_id") is None:
        body["on_completion"] = cron.get("on_run_completed") or "delete"
        body.pop("multitask_strategy", None)
    return body


class CronScheduler:
    """Claims and fires due crons in the background."""

    def __init__(self, ctx: ServerContext, poll_seconds: float | None = None) -> None:
        self.ctx = ctx
        if poll_seconds is None:
            poll_seconds = float(os.environ.get("STEPGRAPH_CRON_POLL_SECONDS") or DEFAULT_POLL_SECONDS)
        self.poll_seconds = max(poll_seconds, 0.05)
        self._background = BackgroundTask("stepgraph-cron-scheduler", self._loop)
        self._wake = asyncio.Event()
        self.fired = 0

    def wake(self) -> None:
        """Look at the schedule again now (a cron was created or changed)."""
        self._wake.set()

    async def tick(self, now: datetime | None = None) -> list[str]:
        """Fire every cron due at ``now``; the ids of the runs started."""
        now = now or datetime.now(UTC)
        started: list[str] = []
        for cron in await self.ctx.crons.due(now):
            if not await self.ctx.crons.claim(cron, now):
                continue  # another scheduler took this firing
            run_id = await self._fire(cron)
            if run_id is not None:
                started.append(run_id)
        return started

    async def _fire(self, cron: dict[str, Any]) -> str | None:
        auth = self._auth(cron)
        try:
            job = await self.ctx.service.create(cron.get("thread_id"), run_body(cron), auth=auth)
        except ApiError as exc:
            logger.warning("cron %s: its run was not created (%s %s)", cron["cron_id"], exc.status_code, exc.detail)
            return None
        except Exception:
            logger.exception("cron %s: its run was not created", cron["cron_id"])
            return None
        self.fired += 1
        logger.info("cron %s fired: run %s on thread %s", cron["cron_id"], job.run_id, job.thread_id)
        return job.run_id

    def _auth(self, cron: dict[str, Any]) -> Any:
        stored = cron.get("_auth")
        authorizer = self.ctx.authorizer
        if not stored or authorizer is None:
            return None
        from stepgraph.server.auth import RequestAuth
        from stepgraph.server.auth.users import from_config

        return RequestAuth(authorizer, from_config(stored.get("user")), list(stored.get("permissions") or []))

    async def _delay(self) -> float:
        soonest = await self.ctx.crons.soonest()
        if soonest is None:
            return self.poll_seconds
        wait = (soonest - datetime.now(UTC)).total_seconds()
        return min(max(wait, 0.0), self.poll_seconds)

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self.tick()
                delay = await self._delay()
            except Exception:  # a failed pass is retried at the next poll
                logger.exception("cron scheduler pass failed")
                delay = self.poll_seconds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay + 0.01)

    def start(self) -> None:
        """Run the scheduler in the background."""
        self._background.start()

    async def stop(self) -> None:
        """Stop the background scheduler."""
        await self._background.stop()
