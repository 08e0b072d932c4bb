"""``StateViews``: the values of a fixed set of channels, refreshed by what changed.

A node reads the state keys it declares every time it runs; on a wide state (hundreds of
keys) building that dict from the channels dominates a step. A view keeps the dict for one
key tuple with the version each key had when read, and on the next read fetches only the
keys whose version moved: a channel's value changes only together with its version (every
update goes through ``apply_writes``), and a restore replaces the channels, which drops
every view. Only channels whose ``get()`` returns the stored value itself are kept this way;
others (a ``Topic`` returns a fresh copy, a custom channel may do anything) are read every
time. Callers get the view's own dict: copy it before handing it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, compress
from operator import ne
from typing import Any

__all__ = ["StateViews"]


def _stable_kinds() -> frozenset[type]:
    """Channel classes whose ``get()`` returns the stored value (not a copy)."""
    from stepgraph.channels.any_value import AnyValue
    from stepgraph.channels.binop import BinaryOperatorAggregate
    from stepgraph.channels.delta import DeltaChannel
    from stepgraph.channels.ephemeral_value import EphemeralValue
    from stepgraph.channels.last_value import LastValue
    from stepgraph.channels.last_value_after_finish import LastValueAfterFinish
    from stepgraph.channels.untracked_value import UntrackedValue

    return frozenset({AnyValue, BinaryOperatorAggregate, DeltaChannel, EphemeralValue,
                      LastValue, LastValueAfterFinish, UntrackedValue})


_STABLE: frozenset[type] | None = None


class StateViews:
    """Views over one run's channels, keyed by the tuple of keys read.

    A view is ``(values, versions of its keys when read, the keys read every time)``; a
    read compares the versions as one tuple (made and compared in C) and visits only the
    keys whose version moved."""

    __slots__ = ("_channels", "_views")

    def __init__(self) -> None:
        self._channels: Any = None
        self._views: dict[Any, tuple[dict[str, Any], tuple[Any, ...], tuple[str, ...]]] = {}

    def read(
        self, channels: Mapping[str, Any], versions: Mapping[str, Any], keys: tuple[str, ...]
    ) -> dict[str, Any]:
        """The available values of ``keys`` (the view's own dict: do not change it)."""
        global _STABLE
        if channels is not self._channels:
            self._channels = channels
            self._views = {}
        now = tuple(map(versions.get, keys))
        entry = self._views.get(keys)
        if entry is None:
            stable = _STABLE if _STABLE is not None else (_STABLE := _stable_kinds())
            values: dict[str, Any] = {}
            always = []
            for k in keys:
                ch = channels[k]
                # a key of a channel that may copy is read every time
                if type(ch) not in stable:
                    always.append(k)
                if ch.is_available():
                    values[k] = ch.get()
            self._views[keys] = (values, now, tuple(always))
            return values
        values, then, always_keys = entry
        if now == then and not always_keys:
            return values
        added = False
        for k in chain(compress(keys, map(ne, now, then)), always_keys):
            ch = channels[k]
            if ch.is_available():
                if not added and k not in values:
                    added = True
                values[k] = ch.get()
            else:
                values.pop(k, None)
        if added:  # keep the keys in their declared order, as a fresh read has them
            values = {k: values[k] for k in keys if k in values}
        self._views[keys] = (values, now, always_keys)
        return values
