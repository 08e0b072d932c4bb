"""``StateViews``: the values of a fixed set of channels, refreshed by what changed.

A node reads the state keys it declares every time it runs; on a wide state (hundreds of
keys) building that dict from the channels dominates a step. A view keeps the dict for one
key tuple, and ``apply_writes`` tells the views which channels it gave a new version
(``note``): a read fetches only those, so it costs what changed, not the width of the
state. A channel's value changes only together with its version (every update goes
through ``apply_writes``), and a restore replaces the channels, which drops every view.
Only channels whose ``get()`` returns the stored value itself are kept this way; others (a
``Topic`` returns a fresh copy, a custom channel may do anything) are read every time.
Callers get the view's own dict: copy it before handing it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stepgraph.channels.any_value import AnyValue
from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.delta import DeltaChannel
from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.channels.last_value_after_finish import LastValueAfterFinish
from stepgraph.channels.untracked_value import UntrackedValue
from stepgraph.constants import MISSING

__all__ = ["StateViews"]


def _stable_kinds() -> frozenset[type]:
    """Channel classes whose ``get()`` returns the stored value (not a copy)."""
    return frozenset({AnyValue, BinaryOperatorAggregate, DeltaChannel, EphemeralValue,
                      LastValue, LastValueAfterFinish, UntrackedValue})


_STABLE: frozenset[type] | None = None

VALUE_SLOT = frozenset({LastValue, EphemeralValue, BinaryOperatorAggregate})
"""Channel classes that keep their value in ``.value`` (``MISSING`` while empty): their
``is_available()`` is ``value is not MISSING``, ``get()`` returns it and ``consume()`` does
nothing. Engine hot paths read these directly (exact classes only, never subclasses)."""


class StateViews:
    """Views over one run's channels, keyed by the tuple of keys read.

    A view is ``[values, keys changed since the last read, keys read every time, its key
    set]``."""

    __slots__ = ("_channels", "_views")

    def __init__(self) -> None:
        self._channels: Any = None
        self._views: dict[tuple[str, ...], list[Any]] = {}

    def note(self, changed: set[str]) -> None:
        """``changed`` channels got a new version (``apply_writes``)."""
        if changed:
            for view in self._views.values():
                view[1] |= view[3] & changed

    def read(self, channels: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        """The available values of ``keys`` (the view's own dict: do not change it)."""
        global _STABLE
        if channels is not self._channels:
            self._channels = channels
            self._views = {}
        view = self._views.get(keys)
        if view is None:
            stable = _STABLE if _STABLE is not None else (_STABLE := _stable_kinds())
            values: dict[str, Any] = {}
            always = []
            for k in keys:
                ch = channels[k]
                if type(ch) not in stable:  # a channel that may copy: read every time
                    always.append(k)
                if ch.is_available():
                    values[k] = ch.get()
            self._views[keys] = [values, set(), tuple(always), frozenset(keys)]
            return values
        values, dirty, always_keys, _ = view
        if not dirty and not always_keys:
            return values
        added = False
        for k in (*dirty, *always_keys) if always_keys else dirty:
            ch = channels[k]
            if type(ch) in VALUE_SLOT:  # (its ``is_available``/``get``, inlined)
                value = ch.value
                if value is MISSING:
                    values.pop(k, None)
                    continue
            elif ch.is_available():
                value = ch.get()
            else:
                values.pop(k, None)
                continue
            if not added and k not in values:
                added = True
            values[k] = value
        dirty.clear()
        if added:  # keep the keys in their declared order, as a fresh read has them
            values = view[0] = {k: values[k] for k in keys if k in values}
        return values
