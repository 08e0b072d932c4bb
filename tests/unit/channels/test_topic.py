"""Topic: the pub/sub list channel (and the Send queue)."""

from collections.abc import Sequence
from typing import Union

import pytest

from stepgraph.channels import Topic
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError


def test_new_topic_is_empty():
    """A fresh Topic is unavailable and get() raises EmptyChannelError."""
    ch = Topic(int)
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_reference_sequence():
    """update([1,[2,3]]) -> True/[1,2,3]; update([]) -> True, empty; update([]) -> False."""
    ch = Topic(int)
    assert ch.update([1, [2, 3]]) is True
    assert ch.get() == [1, 2, 3]
    assert ch.update([]) is True
    assert not ch.is_available()
    assert ch.update([]) is False


def test_flattens_one_level_only():
    """Only one level of list nesting is flattened."""
    ch = Topic(object)
    ch.update([[1, [2]], 3])
    assert ch.get() == [1, [2], 3]


def test_tuples_are_not_flattened():
    """Tuples and other sequences are stored as single values."""
    ch = Topic(object)
    ch.update([(1, 2), "ab", range(2)])
    assert ch.get() == [(1, 2), "ab", range(2)]


def test_list_subclasses_are_flattened():
    """A list subclass counts as a list."""

    class MyList(list):
        pass

    ch = Topic(int)
    ch.update([MyList([1, 2])])
    assert ch.get() == [1, 2]


def test_non_accumulating_replaces_each_step():
    """Without accumulate each update replaces the previous step's values."""
    ch = Topic(int)
    ch.update([1, 2])
    assert ch.update([3]) is True
    assert ch.get() == [3]


def test_empty_list_write_on_empty_topic_is_no_change():
    """Writing only empty lists to an empty topic returns False."""
    ch = Topic(int)
    assert ch.update([[], []]) is False
    assert not ch.is_available()


def test_empty_list_write_empties_topic():
    """Writing only empty lists to a non-empty topic empties it and returns True."""
    ch = Topic(int)
    ch.update([1])
    assert ch.update([[]]) is True
    assert not ch.is_available()


def test_accumulate_extends_across_steps():
    """With accumulate=True values pile up across steps."""
    ch = Topic(int, accumulate=True)
    assert ch.update([1]) is True
    assert ch.update([[2, 3]]) is True
    assert ch.get() == [1, 2, 3]


def test_accumulate_empty_update_returns_false():
    """With accumulate=True an empty update (or empty lists) returns False and keeps values."""
    ch = Topic(int, accumulate=True)
    ch.update([1])
    assert ch.update([]) is False
    assert ch.update([[]]) is False
    assert ch.get() == [1]


def test_get_returns_a_copy():
    """Mutating get()'s result does not change the topic."""
    ch = Topic(int)
    ch.update([1])
    ch.get().append(2)
    assert ch.get() == [1]


def test_consume_and_finish_are_noops():
    """consume() and finish() return False and keep the values."""
    ch = Topic(int)
    ch.update([1])
    assert ch.consume() is False and ch.finish() is False
    assert ch.get() == [1]


def test_checkpoint_is_live_list():
    """checkpoint() returns the stored list itself, not a copy."""
    ch = Topic(int)
    ch.update([1, 2])
    assert ch.checkpoint() is ch.values
    assert ch.checkpoint() == [1, 2]


def test_empty_checkpoint_is_missing():
    """An empty topic checkpoints as MISSING."""
    ch = Topic(int)
    assert ch.checkpoint() is MISSING
    ch.update([1])
    ch.update([])
    assert ch.checkpoint() is MISSING


def test_from_checkpoint_list():
    """from_checkpoint(list) restores values, accumulate flag and key."""
    spec = Topic(int, accumulate=True, key="t")
    ch = spec.from_checkpoint([1, 2])
    assert ch.get() == [1, 2]
    assert (ch.accumulate, ch.key) == (True, "t")
    assert not spec.is_available()


def test_checkpoint_is_not_mutated_by_later_updates():
    """A taken checkpoint keeps its contents when the topic accumulates more."""
    ch = Topic(int, accumulate=True)
    ch.update([1])
    saved = ch.checkpoint()
    ch.update([2])
    assert saved == [1]
    assert ch.get() == [1, 2]


def test_from_checkpoint_legacy_tuple():
    """from_checkpoint accepts the legacy (typ, values) tuple."""
    ch = Topic(int).from_checkpoint((int, [4, 5]))
    assert ch.get() == [4, 5]


def test_from_checkpoint_missing_is_empty():
    """from_checkpoint(MISSING) gives an empty topic."""
    assert not Topic(int).from_checkpoint(MISSING).is_available()


def test_from_checkpoint_does_not_alias_input():
    """Accumulating into a restored topic leaves the checkpoint list untouched."""
    saved = [1]
    ch = Topic(int, accumulate=True).from_checkpoint(saved)
    ch.update([2])
    assert saved == [1]


def test_copy_is_independent():
    """copy() copies the list; appending to the copy leaves the original."""
    ch = Topic(int, accumulate=True, key="t")
    ch.update([1])
    cp = ch.copy()
    cp.update([2])
    assert ch.get() == [1] and cp.get() == [1, 2]
    assert (cp.accumulate, cp.key) == (True, "t")


def test_equality_compares_accumulate():
    """Topics are equal when their accumulate flags match."""
    assert Topic(int) == Topic(str)
    assert Topic(int) != Topic(int, accumulate=True)
    assert Topic(int) != [1]


def test_value_and_update_types():
    """ValueType is Sequence[typ] and UpdateType is typ | list[typ]."""
    ch = Topic(int)
    assert ch.ValueType == Sequence[int]
    assert ch.UpdateType == Union[int, list[int]]  # noqa: UP007


def test_slots_and_repr():
    """Topic has no __dict__ and its repr shows key, mode and values."""
    ch = Topic(int, key="t")
    ch.update([1])
    assert not hasattr(ch, "__dict__")
    assert repr(ch) == "Topic(key='t', accumulate=False, values=[1])"
