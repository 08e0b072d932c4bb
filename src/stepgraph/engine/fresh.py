"""Reading the state as it would be after some writes, without touching the live channels.

Routers see the step-start state plus their own node's writes; an interrupted step shows
the state with its finished siblings' writes applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.last_value import LastValue
from stepgraph.constants import MISSING
from stepgraph.engine.views import VALUE_SLOT

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task


def read_with_writes(
    loop: RunLoop, tasks: Iterable[Task], keys: str | Sequence[str], *, as_step_end: bool = False
) -> Any:
    """``keys`` read from copies of the channels with ``tasks``' writes applied in order.

    ``as_step_end``: every key read is updated, written or not, as at the end of a step, so
    an ephemeral value from the step before reads as cleared (what LangGraph's routers and
    ``fresh`` reads see: a ``jump_to`` written last step does not route this one again)."""
    channels = loop.channels
    grouped: dict[str, list[Any]] = {}
    for task in tasks if type(tasks) is tuple and len(tasks) == 1 else sorted(tasks, key=_order):
        for chan, value in task.writes:
            if chan in channels:
                grouped.setdefault(chan, []).append(value)
    if as_step_end:
        for key in _clearable_keys(loop, keys):
            if key not in grouped and channels[key].is_available():
                grouped[key] = []
    if not grouped:
        return loop.read(keys)
    local: dict[str, Any] = {}  # copies of the written channels, over the live ones
    plain: dict[str, Any] = {}  # the written ``LastValue`` channels' new values
    for chan, values in grouped.items():
        ch = channels[chan]
        if type(ch) is LastValue and len(values) == 1:
            plain[chan] = values[0]  # (what a copy updated with it would hold)
            continue
        ch = ch.copy()
        ch.update(values)
        local[chan] = ch
    if isinstance(keys, str):
        if keys in plain:
            return plain[keys]
        ch = local[keys] if keys in local else channels[keys]
        return ch.get() if ch.is_available() else None
    return _read_over(loop, keys if type(keys) is tuple else tuple(keys), plain, local)


def _read_over(
    loop: RunLoop, names: tuple[str, ...], plain: dict[str, Any], local: dict[str, Any]
) -> dict[str, Any]:
    """``names`` read from ``plain`` values and ``local`` channels over the live ones."""
    channels = loop.channels
    out = dict(loop.views.read(channels, names))  # the live values
    for chan, value in plain.items():
        if chan in out:
            out[chan] = value
        elif chan in names:
            break  # a key becomes available: read in order below
    else:
        for chan, ch in local.items():
            if type(ch) in VALUE_SLOT:  # (``is_available``/``get``, inlined)
                value = ch.value
                if chan in out:
                    if value is not MISSING:
                        out[chan] = value
                    else:
                        del out[chan]
                elif value is not MISSING and chan in names:
                    break
            elif chan in out:
                if ch.is_available():
                    out[chan] = ch.get()
                else:
                    del out[chan]
            elif ch.is_available() and chan in names:
                break
        else:
            return out
    out = {}
    for k in names:
        if k in plain:
            out[k] = plain[k]
            continue
        ch = local[k] if k in local else channels[k]
        if ch.is_available():
            out[k] = ch.get()
    return out


_order = attrgetter("sort_key")


def _clearable(loop: RunLoop) -> tuple[frozenset[str], dict[Any, tuple[str, ...]]]:
    """The channels an empty end-of-step update may change (ephemeral values, topics that do
    not accumulate; plain values and reducers never change), computed once per graph and
    channel set: routers read through this on every step. With it, a memo of which of a
    key tuple's keys those are (``_clearable_keys``)."""
    channels = loop.channels
    graph = loop.graph
    cached = graph.__dict__.get("_sg_clearable")
    if cached is not None and cached[0] == len(channels):
        return cached[1], cached[2]
    plain = (LastValue, BinaryOperatorAggregate)
    keys = frozenset(k for k, ch in channels.items() if type(ch) not in plain)
    memo: dict[Any, tuple[str, ...]] = {}
    graph.__dict__["_sg_clearable"] = (len(channels), keys, memo)
    return keys, memo


def _clearable_keys(loop: RunLoop, keys: str | Sequence[str]) -> tuple[str, ...]:
    """The keys of ``keys`` (one key or several) that are ``_clearable``, in order."""
    clearable, memo = _clearable(loop)
    hashable = type(keys) is str or type(keys) is tuple
    if hashable:
        found = memo.get(keys)
        if found is not None:
            return found
    found = tuple(k for k in ((keys,) if isinstance(keys, str) else keys) if k in clearable)
    if hashable and len(memo) < 256:
        memo[keys] = found
    return found


def fresh_state(task: Task, keys: Sequence[str]) -> dict[str, Any]:
    """The state a router after ``task``'s node sees: step-start values + its own writes."""
    loop = task.run
    managed = loop.graph.managed
    if not managed:
        return read_with_writes(loop, (task,), keys, as_step_end=True)
    out = read_with_writes(loop, (task,), [k for k in keys if k not in managed], as_step_end=True)
    for k in keys:
        kind = managed.get(k)
        if kind is not None:
            out[k] = kind.get(loop)
    return out
