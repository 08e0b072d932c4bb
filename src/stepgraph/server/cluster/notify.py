"""``Listener``: one ``LISTEN`` connection per process, dispatching Postgres notifications.

``LocalListener`` is the same for one process on SQLite: the notifications of its own
transactions (``litepool``'s ``pg_notify``) are dispatched in-process, after their commit.

Channels: ``sg_wake`` (a run became claimable), ``sg_cancel`` (payload ``run_id:action``),
``sg_done`` (payload: a run id that finished), ``sg_events`` (payload: a run id with new
events, Postgres-only mode) and ``sg_gone`` (payload: a deleted thread's id: every process
ends its v3 followers of that thread). Notifications are only wake-ups: every decision is re-read
from the tables, and everyone also polls, so a lost notification (or a reconnect) only
delays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["CHANNELS", "Listener", "LocalListener"]

logger = logging.getLogger("stepgraph.server")

CHANNELS = ("sg_wake", "sg_cancel", "sg_done", "sg_events", "sg_gone")


class Listener:
    """Keeps a ``LISTEN`` connection open (reconnecting) and calls the handlers of a channel."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._handlers: dict[str, list[Callable[[str], None]]] = {c: [] for c in CHANNELS}
        self._waiters: dict[tuple[str, str], set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def on(self, channel: str, handler: Callable[[str], None]) -> None:
        self._handlers[channel].append(handler)

    async def wait(self, channel: str, payload: str, timeout: float) -> None:
        """Wait for a notification ``payload`` on ``channel`` (at most ``timeout`` s)."""
        event = asyncio.Event()
        key = (channel, payload)
        self._waiters.setdefault(key, set()).add(event)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)
        finally:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    del self._waiters[key]

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="pg-listen")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    def _dispatch(self, channel: str, payload: str) -> None:
        for handler in self._handlers.get(channel, ()):
            try:
                handler(payload)
            except Exception:  # noqa: BLE001 - a handler must not stop the listener
                logger.exception("notification handler of %s failed", channel)
        for event in self._waiters.get((channel, payload), ()):
            event.set()

    async def _run(self) -> None:
        import psycopg

        delay = 0.2
        while True:
            conn: Any = None
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
                for channel in CHANNELS:
                    await conn.execute(f"LISTEN {channel}")
                self.connected.set()
                delay = 0.2
                for channel in ("sg_wake",):
                    self._dispatch(channel, "")  # anything missed while away: look again
                async for note in conn.notifies():
                    self._dispatch(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Postgres away: reconnect
                self.connected.clear()
                logger.warning("LISTEN connection lost (%s); reconnecting", exc)
                await asyncio.sleep(delay)
                delay = min(5.0, delay * 2)
            finally:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()


class LocalListener(Listener):
    """``Listener`` of a process whose notifications all come from itself (SQLite)."""

    def __init__(self) -> None:
        super().__init__("")

    def notify(self, channel: str, payload: str) -> None:
        """A committed ``pg_notify``."""
        self._dispatch(channel, payload)

    def start(self) -> None:
        self.connected.set()

    async def stop(self) -> None:
        self.connected.clear()
