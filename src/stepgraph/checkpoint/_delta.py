"""The reference walk behind ``BaseCheckpointSaver.get_delta_channel_history``.

For each requested channel: the writes saved along the target checkpoint's ancestors
(parent, grandparent, ...; writes stored at the target itself are still pending for the
next step and are left out), oldest first, up to and including the nearest ancestor that
stores a value for the channel, whose value is the ``seed``. No stored value up to the
root: no ``seed`` (start empty). Each ancestor is read once for all channels. Savers that
can read their storage directly may override the method with the same result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

__all__ = ["DeltaChannelHistory", "HistoryWalk"]


class DeltaChannelHistory(TypedDict):
    """One channel's part of ``get_delta_channel_history``."""

    writes: list[tuple[str, str, Any]]
    """``(task_id, channel, value)`` writes, oldest first, each checkpoint's in the order
    ``get_tuple`` returns them (the order a step applies them)."""
    seed: NotRequired[Any]
    """The value stored at the nearest ancestor that has one (absent: start empty)."""


class HistoryWalk:
    """Folds ancestor checkpoint tuples, newest first, into per-channel histories."""

    __slots__ = ("channels", "remaining", "collected", "seeds")

    def __init__(self, channels: Sequence[str]) -> None:
        self.channels = list(channels)
        self.remaining = set(channels)
        self.collected: dict[str, list[tuple[str, str, Any]]] = {c: [] for c in channels}
        self.seeds: dict[str, Any] = {}

    def take(self, saved: Any) -> Any:
        """Fold one ancestor; returns the config of the next one to read (``None``: done)."""
        for write in reversed(saved.pending_writes or ()):
            if write[1] in self.remaining:
                self.collected[write[1]].append(tuple(write))  # type: ignore[arg-type]
        values = saved.checkpoint.get("channel_values") or {}
        for channel in [c for c in self.remaining if c in values]:
            self.seeds[channel] = values[channel]
            self.remaining.discard(channel)
        return saved.parent_config if self.remaining else None

    def result(self) -> Mapping[str, DeltaChannelHistory]:
        out: dict[str, DeltaChannelHistory] = {}
        for channel in self.channels:
            entry: DeltaChannelHistory = {"writes": self.collected[channel][::-1]}
            if channel in self.seeds:
                entry["seed"] = self.seeds[channel]
            out[channel] = entry
        return out
