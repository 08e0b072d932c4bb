"""AnyValue: last write wins, empty update clears."""

import pytest

from stepgraph.channels import AnyValue, LastValue
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError


def test_new_channel_is_empty():
    """A fresh AnyValue is unavailable and get() raises EmptyChannelError."""
    ch = AnyValue(int, "a")
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_several_writes_last_wins():
    """Several writes in one step are accepted; the last is kept."""
    ch = AnyValue(int, "a")
    assert ch.update([1, 2, 3]) is True
    assert ch.get() == 3


def test_empty_update_clears_value():
    """update([]) clears a stored value and returns True."""
    ch = AnyValue(int, "a")
    ch.update([1])
    assert ch.update([]) is True
    assert not ch.is_available()


def test_empty_update_on_empty_returns_false():
    """update([]) on an empty channel returns False."""
    assert AnyValue(int).update([]) is False


def test_consume_and_finish_are_noops():
    """consume() and finish() return False."""
    ch = AnyValue(int)
    ch.update([1])
    assert ch.consume() is False and ch.finish() is False
    assert ch.get() == 1


def test_checkpoint_round_trip():
    """checkpoint() is the value (MISSING when empty) and from_checkpoint restores it."""
    ch = AnyValue(int, "a")
    assert ch.checkpoint() is MISSING
    ch.update([5])
    restored = AnyValue(int, "a").from_checkpoint(ch.checkpoint())
    assert restored.get() == 5 and restored.key == "a"
    assert not ch.from_checkpoint(MISSING).is_available()


def test_copy_is_independent():
    """copy() keeps the value; clearing the copy leaves the original."""
    ch = AnyValue(int)
    ch.update([1])
    cp = ch.copy()
    cp.update([])
    assert ch.get() == 1 and not cp.is_available()


def test_equality():
    """AnyValue equals any AnyValue, not a LastValue."""
    assert AnyValue(int) == AnyValue(str)
    assert AnyValue(int) != LastValue(int)


def test_types_and_slots():
    """ValueType/UpdateType are typ, and instances have no __dict__."""
    ch = AnyValue(int)
    assert ch.ValueType is int and ch.UpdateType is int
    assert not hasattr(ch, "__dict__")
