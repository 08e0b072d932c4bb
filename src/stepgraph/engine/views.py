"""``StateViews``: the values of a fixed set of channels, refreshed by what changed.

A node reads the state keys it declares every time it runs; on a wide state (hundreds of
keys) building that dict from the channels dominates a step. A view keeps the dict for one
key tuple with the version each key had when read, and on the next read fetches only the
keys whose version moved: a channel's value changes only together with its version (every
update goes through ``apply_writes``), and a restore replaces the channels, which drops
every view. Callers get the view's own dict: copy it before handing it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["StateViews"]


class StateViews:
    """Views over one run's channels, keyed by the tuple of keys read."""

    __slots__ = ("_channels", "_views")

    def __init__(self) -> None:
        self._channels: Any = None
        self._views: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}

    def read(
        self, channels: Mapping[str, Any], versions: Mapping[str, Any], keys: tuple[str, ...]
    ) -> dict[str, Any]:
        """The available values of ``keys`` (the view's own dict: do not change it)."""
        if channels is not self._channels:
            self._channels = channels
            self._views = {}
        entry = self._views.get(keys)
        if entry is None:
            values: dict[str, Any] = {}
            seen: dict[str, Any] = {}
            for k in keys:
                seen[k] = versions.get(k)
                ch = channels[k]
                if ch.is_available():
                    values[k] = ch.get()
            self._views[keys] = (values, seen)
            return values
        values, seen = entry
        added = False
        for k in keys:
            v = versions.get(k)
            if v != seen[k]:
                seen[k] = v
                ch = channels[k]
                if ch.is_available():
                    if not added and k not in values:
                        added = True
                    values[k] = ch.get()
                else:
                    values.pop(k, None)
        if added:  # keep the keys in their declared order, as a fresh read has them
            values = {k: values[k] for k in keys if k in values}
            self._views[keys] = (values, seen)
        return values
