"""Riding out a PostgreSQL restart: retry what failed because the connection went away.

The cluster's pool checks each connection it hands out (``storage.postgres.check_idle_connection``), so a caller
that asks for a connection while the server is down waits in the pool until it is back; what
fails is only a statement that was in flight on a connection the restart cut
(``psycopg.OperationalError``). ``retrying`` runs such an operation again, on a fresh
connection, until ``deadline`` seconds have passed. Only idempotent operations are retried:
the cluster's writes are upserts or conditional updates, so one that did commit before the
connection dropped changes nothing when it runs again.

``ReplayableFlow`` does the same for a saver flow (a sans-IO generator, which cannot be
restarted): the statements already executed are executed again in the new transaction,
then the flow goes on from where the connection was lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from stepgraph.checkpoint._flows import Flow, Op, aexecute

__all__ = ["ReplayableFlow", "is_disconnect", "retrying"]

logger = logging.getLogger("stepgraph.server")

T = TypeVar("T")


def is_disconnect(exc: BaseException) -> bool:
    """Whether ``exc`` says the database connection failed (not that a statement was wrong)."""
    try:
        import psycopg
        from psycopg_pool import PoolTimeout
    except ImportError:  # pragma: no cover - no Postgres driver, no cluster
        return False
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    # an OperationalError with a SQLSTATE is the server refusing a statement (e.g. a lock
    # timeout); one without is the connection itself (closed, reset, server shutting down)
    sqlstate = getattr(exc, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


async def retrying(op: Callable[[], Awaitable[T]], *, what: str, deadline: float = 30.0,
                   give_up: Callable[[], bool] = lambda: False) -> T:
    """``await op()``, again after a lost connection, until ``deadline`` s (or ``give_up()``)."""
    end = time.monotonic() + deadline
    delay = 0.1
    while True:
        try:
            return await op()
        except Exception as exc:
            if not is_disconnect(exc) or time.monotonic() + delay > end or give_up():
                raise
            logger.warning("%s: the database connection failed (%s); retrying", what, exc)
        await asyncio.sleep(delay)
        delay = min(1.0, delay * 2)


class ReplayableFlow(Generic[T]):
    """A saver flow that can be driven again in a new transaction after a lost connection."""

    _UNSET: Any = object()

    def __init__(self, flow: Flow[T]) -> None:
        self.flow = flow
        self.applied: list[Op] = []
        self.next_op: Op | None = None
        self.started = False
        self.result: Any = self._UNSET

    async def drive(self, cursor: Any) -> T:
        """Run the flow to its end on ``cursor`` (statements already executed first, again)."""
        for op in self.applied:
            await aexecute(cursor, op)
        if self.result is not self._UNSET:
            return self.result  # type: ignore[no-any-return]
        try:
            if not self.started:
                self.started = True
                self.next_op = next(self.flow)
            while True:
                assert self.next_op is not None
                rows = await aexecute(cursor, self.next_op)
                self.applied.append(self.next_op)
                self.next_op = self.flow.send(rows)
        except StopIteration as done:
            self.result = done.value
            return self.result  # type: ignore[no-any-return]
