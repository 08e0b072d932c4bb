"""Restoring ``DeltaChannel`` keys: which ones a saved checkpoint lacks, and their history.

A checkpoint without a delta key's value is completed from the saver's
``get_delta_channel_history`` (the nearest stored value and the writes after it); the I/O
shells (drivers, ``pregel/state.py``) call ``load_history`` / ``aload_history`` and hand the
result to ``RunLoop.restore``. Graphs without delta keys pay one empty-tuple test.

Writes to a delta key are stored and replayed, so message-like writes get their ids before
they are stored (``stamp_message_ids``): a message rebuilt twice must be the same message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stepgraph.messages._dict import new_id
from stepgraph.messages._merge import langchain_available

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel

History = Mapping[str, Mapping[str, Any]]
"""channel -> ``{"writes": [(task_id, channel, value), ...], "seed"?: value}``."""


def missing_keys(graph: Pregel, saved: Any) -> list[str]:
    """The delta keys ``saved`` has a version of but no stored value for."""
    keys = graph.delta_keys
    if not keys or saved is None:
        return []
    checkpoint = saved.checkpoint
    values = checkpoint.get("channel_values") or {}
    versions = checkpoint.get("channel_versions") or {}
    return [k for k in keys if k in versions and k not in values]


def load_history(saver: Any, graph: Pregel, saved: Any) -> History | None:
    """The history of ``saved``'s missing delta keys (``None`` when none are missing)."""
    missing = missing_keys(graph, saved)
    if not missing:
        return None
    return saver.get_delta_channel_history(config=saved.config, channels=missing)


async def aload_history(saver: Any, graph: Pregel, saved: Any) -> History | None:
    """Async twin of ``load_history``."""
    missing = missing_keys(graph, saved)
    if not missing:
        return None
    return await saver.aget_delta_channel_history(config=saved.config, channels=missing)


def stamp_message_ids(value: Any) -> Any:
    """``value`` with every message in it given an id (dict messages coerced to the message
    type the run uses); other values are returned unchanged."""
    if isinstance(value, list):
        return [_stamp(v) for v in value]
    if isinstance(value, tuple) and not _is_pair(value):
        return tuple(_stamp(v) for v in value)
    return _stamp(value)


def _is_pair(value: tuple[Any, ...]) -> bool:
    """A ``(role, content)`` message tuple is one message, not a sequence of them."""
    return len(value) == 2 and all(isinstance(v, str) for v in value)


def _stamp(item: Any) -> Any:
    if isinstance(item, dict):
        if "content" not in item or not ("role" in item or "type" in item):
            return item
        if langchain_available():
            # lazy: langchain-core
            from stepgraph.messages import _lc

            return _lc.normalize([item])[0][0]
        if item.get("id") is None:
            return {**item, "id": new_id()}
        return item
    if hasattr(item, "content") and hasattr(item, "id") and hasattr(item, "type"):
        if item.id is None:
            item.id = new_id()
    return item
