"""``apply_writes``: the update phase of a superstep, deterministic whatever the task order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.constants import MISSING, RESERVED, TASKS
from stepgraph.engine.views import VALUE_SLOT
from stepgraph.errors import InvalidUpdateError

if TYPE_CHECKING:
    from stepgraph.channels.base import BaseChannel

Version = Any
_ONE_WRITE_STORES = frozenset({LastValue, EphemeralValue})
"""Channels whose update with one write stores it (and reports a change)."""
_EMPTY: tuple[Any, ...] = ()


class Touched:
    """What ``apply_writes`` changed, collected across calls until ``clear()``: the channels
    given a new version and the nodes whose ``versions_seen`` entry was updated. The saver's
    checkpoint image is brought up to date from these alone (``engine.image``)."""

    __slots__ = ("channels", "seen")

    def __init__(self) -> None:
        self.channels: set[str] = set()
        self.seen: set[str] = set()

    def clear(self) -> None:
        self.channels.clear()
        self.seen.clear()


class WriteSource:
    """Minimal view of a task for ``apply_writes`` (tasks, the input pseudo-task, updates)."""

    __slots__ = ("name", "path", "triggers", "writes", "sort_key")

    def __init__(
        self,
        name: str,
        writes: list[tuple[str, Any]],
        triggers: tuple[str, ...] = (),
        path: tuple[Any, ...] = (),
        sort_key: str = "",
    ) -> None:
        self.name = name
        self.writes = writes
        self.triggers = triggers
        self.path = path
        self.sort_key = sort_key


def apply_writes(
    channels: Mapping[str, BaseChannel],
    versions: dict[str, Version],
    versions_seen: dict[str, dict[str, Version]],
    tasks: Iterable[Any],
    next_version: Callable[[Version | None], Version],
    trigger_to_nodes: Mapping[str, Any],
    volatile: Iterable[str],
    finishable: Iterable[str],
    step: int | None = None,
    *,
    new_version: Version | None = None,
    live: set[str] | None = None,
    touched: Touched | None = None,
    views: Any = None,
) -> set[str]:
    """Apply one step's writes to ``channels``; return the channels that became updated.

    Tasks are applied in ``sort_key`` order (PULL by name, then PUSH by index), so the
    result never depends on completion order. Every changed channel gets one new version.
    ``volatile`` names the channels that change on an empty update (ephemeral values,
    non-accumulating topics), ``finishable`` the ones with ``finish()`` semantics: only
    those are visited besides the written ones, so a step costs what changed in it. ``live``
    (optional, kept up to date in place) narrows ``volatile`` to the ones that may hold a
    value; ``new_version`` saves a scan for the current maximum. ``touched`` (optional)
    receives every channel given a new version and every node whose seen versions moved;
    ``views`` (a ``StateViews``, optional) is told which channels got a new version.
    """
    ordered = tasks if type(tasks) is list and len(tasks) < 2 else sorted(tasks, key=_sort_key)
    bump_step, consumed = _mark_seen(ordered, versions, versions_seen, channels, touched)
    changed: set[str] = set()
    try:
        if new_version is None:
            new_version = next_version(max(versions.values()) if versions else None)
        if consumed:
            for chan in consumed:
                ch = channels[chan]
                if type(ch) not in VALUE_SLOT and ch.consume():
                    versions[chan] = new_version
                    changed.add(chan)
        grouped = _group_writes(ordered, channels, step)
        updated = _update_all(channels, grouped, versions, new_version, changed)
        if bump_step:
            _bump_idle(channels, volatile, live, grouped, versions, new_version, updated, changed)
        if live is not None:
            for chan in grouped:
                if chan in volatile:
                    ch = channels[chan]
                    if ch.value is not MISSING if type(ch) in VALUE_SLOT else ch.is_available():
                        live.add(chan)
        if bump_step and finishable:
            # (``set.isdisjoint`` would iterate a whole dict argument: test the few updated)
            if not any(c in trigger_to_nodes for c in updated):
                for chan in finishable:
                    _bump(
                        channels[chan],
                        chan,
                        channels[chan].finish,
                        None,
                        versions,
                        new_version,
                        updated,
                        changed,
                    )
    finally:  # (also when a reducer raised: what moved is known)
        if touched is not None:
            touched.channels |= changed
        if views is not None:
            views.note(changed)
    return updated


def _mark_seen(
    ordered: list[Any],
    versions: dict[str, Any],
    versions_seen: dict[str, dict[str, Any]],
    channels: Mapping[str, Any],
    touched: Touched | None,
) -> tuple[bool, set[str] | None]:
    """Record the versions each task's node has now seen; ``(any task had triggers, the
    trigger channels consumed)``."""
    bump_step = False
    seen_names = touched.seen if touched is not None else None
    consumed: set[str] | None = None
    for task in ordered:
        triggers = task.triggers
        if not triggers:
            continue
        bump_step = True
        name = task.name
        seen = versions_seen.get(name)
        if seen is None:
            seen = versions_seen[name] = {}
        for chan in triggers:
            if chan in versions:
                seen[chan] = versions[chan]
            if chan not in RESERVED and chan in channels:
                if consumed is None:
                    consumed = {chan}
                else:
                    consumed.add(chan)
        if seen_names is not None:
            seen_names.add(name)
    return bump_step, consumed


def _update_all(
    channels: Mapping[str, Any],
    grouped: dict[str, list[Any]],
    versions: dict[str, Any],
    new_version: Any,
    changed: set[str],
) -> set[str]:
    updated: set[str] = set()
    for chan, values in grouped.items():
        ch = channels[chan]
        if type(ch) in _ONE_WRITE_STORES and len(values) == 1:
            # (``LastValue``/``EphemeralValue.update`` of one write, inlined: most writes)
            value = ch.value = values[0]
            versions[chan] = new_version
            changed.add(chan)
            if value is not MISSING:
                updated.add(chan)
            continue
        try:
            moved = ch.update(values)
        except InvalidUpdateError:
            raise
        except Exception as exc:  # a reducer raised: say which key
            exc.add_note(f"While applying writes to channel '{chan}'.")
            raise
        if moved:
            versions[chan] = new_version
            changed.add(chan)
            if ch.value is not MISSING if type(ch) in VALUE_SLOT else ch.is_available():
                updated.add(chan)
    return updated


def _bump_idle(
    channels: Mapping[str, Any],
    volatile: Iterable[str],
    live: set[str] | None,
    grouped: dict[str, list[Any]],
    versions: dict[str, Any],
    new_version: Any,
    updated: set[str],
    changed: set[str],
) -> None:
    """The volatile channels nobody wrote (only the ``live`` ones, when given) see an empty
    update: an ephemeral value from the step before clears."""
    for chan in volatile if live is None else tuple(live):
        if chan in grouped:
            continue
        ch = channels[chan]
        if type(ch) is EphemeralValue:  # (its empty update, inlined: it clears)
            if ch.value is not MISSING:
                ch.value = MISSING
                versions[chan] = new_version
                changed.add(chan)
            if live is not None:
                live.discard(chan)
            continue
        if not ch.is_available():
            if live is not None:
                live.discard(chan)
        elif ch.update(_EMPTY):
            versions[chan] = new_version
            changed.add(chan)
            if ch.is_available():
                updated.add(chan)
            elif live is not None:
                live.discard(chan)
        elif live is not None and not ch.is_available():
            live.discard(chan)


def _bump(
    ch: Any,
    chan: str,
    fn: Any,
    arg: Any,
    versions: dict[str, Any],
    new_version: Any,
    updated: set[str],
    changed: set[str],
) -> None:
    if arg is not None and not ch.is_available():
        return
    if fn(arg) if arg is not None else fn():
        versions[chan] = new_version
        changed.add(chan)
        if ch.is_available():
            updated.add(chan)


def _group_writes(
    ordered: list[Any], channels: Mapping[str, Any], step: int | None
) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for task in ordered:
        for chan, value in task.writes:
            if chan in RESERVED and chan != TASKS:
                continue
            if chan not in channels:
                raise InvalidUpdateError(
                    f"Task '{task.name}' (path {task.path}) wrote to unknown channel "
                    f"'{chan}'" + (f" in step {step}" if step is not None else "") + ".",
                    code="SG210",
                    hint=f"write only to declared channels: {sorted(channels)[:20]}",
                )
            lst = grouped.get(chan)
            if lst is None:
                grouped[chan] = [value]
            else:
                lst.append(value)
    return grouped


def _sort_key(task: Any) -> str:
    return task.sort_key
