"""``DeltaChannel`` on its own: folding, overwrites, replay and its snapshot counter."""

from __future__ import annotations

import pytest

from stepgraph.channels.delta import DeltaChannel
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError
from stepgraph.types import Overwrite


def concat(value: list, writes: list) -> list:
    out = list(value)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def test_folds_each_step_in_one_reducer_call() -> None:
    calls: list[list] = []

    def spy(value: list, writes: list) -> list:
        calls.append(list(writes))
        return concat(value, writes)

    ch = DeltaChannel(spy).from_checkpoint(MISSING)
    assert ch.get() == [] and ch.checkpoint() is MISSING
    assert ch.update([["a"], "b"]) and ch.get() == ["a", "b"]
    assert not ch.update([])
    assert calls == [[["a"], "b"]]


def test_overwrite_replaces_and_forces_a_whole_value() -> None:
    ch = DeltaChannel(concat, snapshot_frequency=50).from_checkpoint(["x"])
    ch.update([Overwrite(["y"])])
    assert ch.get() == ["y"] and ch.snapshot_due()
    ch.stored_whole()
    assert not ch.snapshot_due()
    with pytest.raises(InvalidUpdateError):
        ch.update([Overwrite([]), Overwrite([])])
    ch.update([{"__overwrite__": None}])
    assert ch.get() == []


def test_replay_starts_from_the_seed_or_the_last_overwrite() -> None:
    ch = DeltaChannel(concat).from_checkpoint(["s"])
    ch.replay_writes([("t1", "k", ["a"]), ("t2", "k", Overwrite(["o"])), ("t3", "k", "b")])
    assert ch.get() == ["o", "b"] and ch.pending == 3
    none_seed = DeltaChannel(lambda v, ws: ws[-1] if ws else v).from_checkpoint(None)
    none_seed.replay_writes([("t", "k", "after")])
    assert none_seed.get() == "after"


def test_snapshot_counter_counts_writes() -> None:
    ch = DeltaChannel(concat, snapshot_frequency=3).from_checkpoint(MISSING)
    ch.update(["a"])
    ch.update(["b"])
    assert not ch.snapshot_due()
    ch.update(["c"])
    assert ch.snapshot_due()
    copied = ch.copy()
    assert copied.get() == ["a", "b", "c"] and copied.snapshot_due()
    copied.update(["d"])
    assert ch.get() == ["a", "b", "c"]  # copies are independent


def test_type_equality_and_validation() -> None:
    ch = DeltaChannel(concat).with_type(dict[str, str])
    assert ch.from_checkpoint(MISSING).get() == {}
    assert DeltaChannel(concat) == DeltaChannel(concat, snapshot_frequency=100)
    assert DeltaChannel(concat) != DeltaChannel(concat, snapshot_frequency=5)
    with pytest.raises(ValueError):
        DeltaChannel(concat, snapshot_frequency=0)
    empty = DeltaChannel(concat)
    empty.value = MISSING
    with pytest.raises(EmptyChannelError):
        empty.get()
