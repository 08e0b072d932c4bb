"""``apply_writes``: the update phase of a superstep, deterministic whatever the task order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stepgraph.constants import RESERVED, TASKS
from stepgraph.errors import InvalidUpdateError

if TYPE_CHECKING:
    from stepgraph.channels.base import BaseChannel

Version = Any
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
        self, name: str, writes: list[tuple[str, Any]], triggers: tuple[str, ...] = (),
        path: tuple[Any, ...] = (), sort_key: str = "",
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
) -> set[str]:
    """Apply one step's writes to ``channels``; return the channels that became updated.

    Tasks are applied in ``sort_key`` order (PULL by name, then PUSH by index), so the
    result never depends on completion order. Every changed channel gets one new version.
    ``volatile`` names the channels that change on an empty update (ephemeral values,
    non-accumulating topics), ``finishable`` the ones with ``finish()`` semantics: only
    those are visited besides the written ones, so a step costs what changed in it. ``live``
    (optional, kept up to date in place) narrows ``volatile`` to the ones that may hold a
    value; ``new_version`` saves a scan for the current maximum. ``touched`` (optional)
    receives every channel given a new version and every node whose seen versions moved.
    """
    ordered = sorted(tasks, key=_sort_key)
    bump_step = _mark_seen(ordered, versions, versions_seen)
    if touched is not None:
        touched.seen.update(t.name for t in ordered if t.triggers)
        changed = touched.channels
    else:
        changed = set()
    if new_version is None:
        new_version = next_version(max(versions.values()) if versions else None)

    consumed = {c for t in ordered for c in t.triggers if c not in RESERVED and c in channels}
    for chan in consumed:
        if channels[chan].consume():
            versions[chan] = new_version
            changed.add(chan)

    grouped = _group_writes(ordered, channels, step)
    updated: set[str] = set()
    for chan, values in grouped.items():
        ch = channels[chan]
        if _update(ch, chan, values):
            versions[chan] = new_version
            changed.add(chan)
            if ch.is_available():
                updated.add(chan)

    if bump_step:
        scan = volatile if live is None else tuple(live)
        for chan in scan:
            if chan not in grouped:
                _bump(channels[chan], chan, channels[chan].update, _EMPTY, versions, new_version, updated,
                      changed)
                if live is not None and not channels[chan].is_available():
                    live.discard(chan)
    if live is not None:
        live.update(c for c in grouped if c in volatile and channels[c].is_available())
    if bump_step:
        # (``set.isdisjoint`` would iterate a whole dict argument: test the few updated)
        if not any(c in trigger_to_nodes for c in updated):
            for chan in finishable:
                _bump(channels[chan], chan, channels[chan].finish, None, versions, new_version, updated,
                      changed)
    return updated


def _bump(ch: Any, chan: str, fn: Any, arg: Any, versions: dict[str, Any], new_version: Any,
          updated: set[str], changed: set[str]) -> None:
    if arg is not None and not ch.is_available():
        return
    if fn(arg) if arg is not None else fn():
        versions[chan] = new_version
        changed.add(chan)
        if ch.is_available():
            updated.add(chan)


def _mark_seen(ordered: list[Any], versions: dict[str, Any], versions_seen: dict[str, dict[str, Any]]) -> bool:
    bump_step = False
    for task in ordered:
        if task.triggers:
            bump_step = True
            seen = versions_seen.get(task.name)
            if seen is None:
                seen = versions_seen[task.name] = {}
            for chan in task.triggers:
                if chan in versions:
                    seen[chan] = versions[chan]
    return bump_step


def _group_writes(ordered: list[Any], channels: Mapping[str, Any], step: int | None) -> dict[str, list[Any]]:
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


def _update(ch: BaseChannel, chan: str, values: list[Any]) -> bool:
    try:
        return ch.update(values)
    except InvalidUpdateError:
        raise
    except Exception as exc:  # a reducer raised: say which key
        exc.add_note(f"While applying writes to channel '{chan}'.")
        raise
