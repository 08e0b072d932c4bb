"""The running task, reachable from user code through a ``ContextVar``.

``get_config()``, ``get_stream_writer()``, ``get_runtime()`` and ``interrupt()`` read it. The
engine sets it around each node call (in the worker thread or the asyncio task that runs
the node), so concurrent tasks never see each other's context.

This module is at the bottom of the layering (it imports nothing of stepgraph at run time):
``config``, ``types``, ``runtime`` and ``stream/`` read the running task here without
importing ``engine/``, which sets it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task

_CURRENT: ContextVar[Task | None] = ContextVar("stepgraph_task", default=None)


def current_task() -> Task | None:
    """The task whose node is running in this thread / asyncio task, if any."""
    return _CURRENT.get()


def set_current_task(task: Task | None) -> object:
    """Make ``task`` current; returns a token for ``reset_current_task``."""
    return _CURRENT.set(task)


def reset_current_task(token: object) -> None:
    _CURRENT.reset(token)  # type: ignore[arg-type]


def ambient_config() -> dict | None:
    """Outside a task: the config langchain-core's context holds (``var_child_runnable_config``,
    set by langchain runnables and by code that mimics LangGraph's task context), if
    langchain-core is loaded; else ``None``. Never imports langchain-core."""
    import sys

    module = sys.modules.get("langchain_core.runnables.config")
    if module is None:
        return None
    config = module.var_child_runnable_config.get()
    return config if isinstance(config, dict) else None


def ambient_runtime() -> object | None:
    """The ``Runtime`` an ambient config carries (LangGraph's ``__pregel_runtime`` key)."""
    config = ambient_config()
    if not config:
        return None
    return (config.get("configurable") or {}).get("__pregel_runtime")
