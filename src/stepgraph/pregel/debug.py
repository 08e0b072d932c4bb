"""The payloads of the ``tasks`` and ``debug`` stream modes, as functions over tasks.

``map_debug_tasks`` announces tasks (id, name, input, triggers, and the user metadata and
tags of their config); ``map_debug_task_results`` reports what a task wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from stepgraph.constants import ERROR, INTERRUPT, RETURN, TAG_HIDDEN
from stepgraph.stream.events import task_payload

__all__ = [
    "is_multiple_channel_write",
    "map_debug_task_results",
    "map_debug_tasks",
    "map_task_result_writes",
]


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """One ``tasks`` payload per task; tasks tagged hidden (``langsmith:hidden``) are skipped."""
    for task in tasks:
        config = task.config
        if config is not None and TAG_HIDDEN in (config.get("tags") or ()):
            continue
        yield task_payload(task)


def is_multiple_channel_write(value: Any) -> bool:
    """Whether ``value`` already folds several writes to one channel (``{"$writes": [...]}``)."""
    return isinstance(value, dict) and isinstance(value.get("$writes"), list)


def map_task_result_writes(writes: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """``{channel: value}``; a channel written more than once maps to
    ``{"$writes": [value, ...]}``."""
    result: dict[str, Any] = {}
    for channel, value in writes:
        if channel not in result:
            result[channel] = value
            continue
        prev = result[channel]
        folded = prev["$writes"] if is_multiple_channel_write(prev) else [prev]
        result[channel] = {"$writes": [*folded, value]}
    return result


def map_debug_task_results(
    task_tup: tuple[Any, Sequence[tuple[str, Any]]], stream_keys: str | Sequence[str]
) -> Iterator[dict[str, Any]]:
    """The ``tasks`` result payload of a ``(task, writes)`` pair: writes to the stream keys
    (and a returned value), the error and the interrupts it raised."""
    keys = {stream_keys} if isinstance(stream_keys, str) else set(stream_keys)
    task, writes = task_tup
    yield {
        "id": task.id,
        "name": task.name,
        "error": next((v for c, v in writes if c == ERROR), None),
        "result": map_task_result_writes([(c, v) for c, v in writes if c in keys or c == RETURN]),
        "interrupts": [
            {"value": i.value, "id": i.id}
            for c, v in writes if c == INTERRUPT
            for i in (v if isinstance(v, Sequence) else [v])
        ],
    }
