"""EphemeralValue: a value visible for one step, cleared by the next update."""

import pytest

from stepgraph.channels import EphemeralValue
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError


def test_new_channel_is_empty():
    """A fresh EphemeralValue is unavailable and get() raises EmptyChannelError."""
    ch = EphemeralValue(int)
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_single_write_sets_value():
    """One write stores the value and returns True."""
    ch = EphemeralValue(int)
    assert ch.update([1]) is True
    assert ch.get() == 1


def test_empty_update_clears_value():
    """update([]) clears a set value and returns True."""
    ch = EphemeralValue(int)
    ch.update([1])
    assert ch.update([]) is True
    assert not ch.is_available()


def test_empty_update_on_empty_returns_false():
    """update([]) on an empty channel returns False."""
    assert EphemeralValue(int).update([]) is False


def test_guard_rejects_several_writes():
    """With guard=True two writes raise InvalidUpdateError SG201 with LangGraph's text."""
    ch = EphemeralValue(int, key="e")
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([1, 2])
    assert info.value.code == "SG201"
    assert (
        "At key 'e': EphemeralValue(guard=True) can receive only one value per step. "
        "Use guard=False" in str(info.value)
    )


def test_unguarded_keeps_last():
    """With guard=False (branch:to:* channels) the last of several writes is kept."""
    ch = EphemeralValue(object, guard=False)
    assert ch.update([None, "x"]) is True
    assert ch.get() == "x"


def test_consume_and_finish_are_noops():
    """consume() and finish() return False."""
    ch = EphemeralValue(int)
    ch.update([1])
    assert ch.consume() is False and ch.finish() is False


def test_checkpoint_round_trip():
    """checkpoint() is the value (MISSING when empty); from_checkpoint restores it."""
    ch = EphemeralValue(int, guard=False, key="e")
    assert ch.checkpoint() is MISSING
    ch.update([2])
    restored = ch.from_checkpoint(ch.checkpoint())
    assert restored.get() == 2
    assert (restored.guard, restored.key) == (False, "e")
    assert not ch.from_checkpoint(MISSING).is_available()


def test_copy_is_independent():
    """copy() keeps value and guard; clearing the copy leaves the original."""
    ch = EphemeralValue(int, guard=False)
    ch.update([1])
    cp = ch.copy()
    assert cp.get() == 1 and cp.guard is False
    cp.update([])
    assert ch.get() == 1


def test_equality_compares_guard():
    """EphemeralValue channels are equal when their guard flags match."""
    assert EphemeralValue(int) == EphemeralValue(str)
    assert EphemeralValue(int) != EphemeralValue(int, guard=False)


def test_types_and_slots():
    """ValueType/UpdateType are typ, and instances have no __dict__."""
    ch = EphemeralValue(int)
    assert ch.ValueType is int and ch.UpdateType is int
    assert not hasattr(ch, "__dict__")
