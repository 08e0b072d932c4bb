"""A named asyncio task a server component runs while the app lives (start once, stop and
wait on shutdown): the cron scheduler and the thread TTL sweeper use it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["BackgroundTask"]


class BackgroundTask:
    """``start()`` runs ``body()`` as a task named ``name``; ``stop()`` cancels and awaits it."""

    def __init__(self, name: str, body: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.name = name
        self.body = body
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the task (idempotent)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.body(), name=self.name)

    async def stop(self) -> None:
        """Cancel the task and wait until it has stopped."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
