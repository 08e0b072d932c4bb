"""Run configuration and the accessors nodes use to reach the current run.

``RunnableConfig`` is a plain ``TypedDict`` (LangGraph's keys) so stepgraph needs no
langchain-core; a langchain ``RunnableConfig`` is the same shape and works as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from stepgraph._running import ambient_config, ambient_runtime, current_task

if TYPE_CHECKING:
    from stepgraph.types import StreamWriter

__all__ = ["RunnableConfig", "get_config", "get_store", "get_stream_writer", "ensure_config"]


class RunnableConfig(TypedDict, total=False):
    """Configuration of one run: ``configurable`` carries ``thread_id`` and friends."""

    tags: list[str]
    metadata: dict[str, Any]
    callbacks: Any
    run_name: str
    max_concurrency: int | None
    recursion_limit: int
    configurable: dict[str, Any]
    run_id: Any


CONFIG_KEYS = frozenset(RunnableConfig.__annotations__)


def ensure_config(*configs: Mapping[str, Any] | None) -> RunnableConfig:
    """Merge configs left to right into a fresh dict (``configurable`` and ``metadata`` merged).

    A top-level key that is not a ``RunnableConfig`` key (``{"thread_id": ...}``) goes into
    ``configurable``, as LangGraph moves it."""
    out: dict[str, Any] = {"tags": [], "metadata": {}, "configurable": {}}
    for config in configs:
        if not config:
            continue
        for key, value in config.items():
            if value is None and key != "callbacks":
                continue
            if key not in CONFIG_KEYS:
                out["configurable"] = {**out["configurable"], key: value}
            elif key == "configurable" or key == "metadata":
                out[key] = {**out[key], **value}
            elif key == "tags":
                out["tags"] = list(dict.fromkeys([*out["tags"], *value]))
            else:
                out[key] = value
    return out  # type: ignore[return-value]


METADATA_FROM_CONFIGURABLE = (
    "thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id", "graph_id",
)
"""``configurable`` keys LangGraph copies into a run's ``metadata`` when it starts."""


def with_run_metadata(config: RunnableConfig) -> RunnableConfig:
    """``config`` whose ``metadata`` also has the ``METADATA_FROM_CONFIGURABLE`` values the
    caller gave (those it does not have yet), so streamed and traced metadata carry them."""
    configurable = config.get("configurable")
    if not configurable:
        return config
    metadata = config.get("metadata") or {}
    extra = {k: v for k in METADATA_FROM_CONFIGURABLE
             if k not in metadata and (v := configurable.get(k))}
    if not extra:
        return config
    return {**config, "metadata": {**metadata, **extra}}  # type: ignore[typeddict-item]


def get_config() -> RunnableConfig:
    """The config of the task that is running now.

    Raises ``RuntimeError`` outside a running graph.
    """
    task = current_task()
    if task is None:
        ambient = ambient_config()
        if ambient is not None:  # a langchain runnable's context outside a stepgraph task
            return ambient  # type: ignore[return-value]
        raise RuntimeError("Called get_config outside of a runnable context")
    return task.config


def get_store() -> Any:
    """The store the graph was compiled with (``None`` if none), from inside a node."""
    task = current_task()
    if task is None:
        runtime = ambient_runtime()
        if runtime is not None:
            return runtime.store  # type: ignore[attr-defined]
        raise RuntimeError("Called get_store outside of a runnable context")
    return task.runtime.store


def get_stream_writer() -> StreamWriter:
    """A function that writes to the ``custom`` stream (a no-op when nobody streams it)."""
    task = current_task()
    if task is None:
        runtime = ambient_runtime()
        if runtime is not None:
            return runtime.stream_writer  # type: ignore[attr-defined]
        raise RuntimeError("Called get_stream_writer outside of a runnable context")
    return task.runtime.stream_writer
