"""A node body with a sync and an async implementation (LangGraph's ``RunnableCallable``).

stepgraph calls an object with ``invoke``/``ainvoke`` as ``invoke(state, config)``: the sync
driver uses ``invoke``, the async one ``ainvoke``. The functions here also receive the
running task's ``Runtime`` (a default one outside a graph).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from stepgraph._running import current_task
from stepgraph.runtime import Runtime

__all__ = ["SyncAsyncNode", "current_runtime"]


def current_runtime() -> Runtime[Any]:
    """The running task's ``Runtime``, or an empty one outside a graph."""
    task = current_task()
    return task.runtime if task is not None else Runtime()


class SyncAsyncNode:
    """``func(state, runtime, config)`` for ``invoke``, ``afunc`` for ``ainvoke``."""

    def __init__(
        self,
        func: Callable[[Any, Runtime[Any], Any], Any],
        afunc: Callable[[Any, Runtime[Any], Any], Awaitable[Any]],
        *,
        name: str,
    ) -> None:
        self.func = func
        self.afunc = afunc
        self.name = name

    def __repr__(self) -> str:
        return f"SyncAsyncNode({self.name})"

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.func(input, current_runtime(), config or {})

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return await self.afunc(input, current_runtime(), config or {})
