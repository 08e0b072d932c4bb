"""UntrackedValue: a guarded last value that is never checkpointed."""

import pytest

from stepgraph.channels import UntrackedValue
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError


def test_new_channel_is_empty():
    """A fresh UntrackedValue is unavailable and get() raises EmptyChannelError."""
    ch = UntrackedValue(int)
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_single_write_sets_value():
    """One write stores the value and returns True."""
    ch = UntrackedValue(int)
    assert ch.update([3]) is True
    assert ch.get() == 3


def test_empty_update_keeps_value():
    """update([]) returns False and keeps the value."""
    ch = UntrackedValue(int)
    assert ch.update([]) is False
    ch.update([3])
    assert ch.update([]) is False
    assert ch.get() == 3


def test_guard_rejects_several_writes():
    """With guard=True two writes raise InvalidUpdateError SG201 naming the key."""
    ch = UntrackedValue(int, key="u")
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([1, 2])
    assert info.value.code == "SG201"
    assert (
        "At key 'u': UntrackedValue(guard=True) can receive only one value per step. "
        "Use guard=False" in str(info.value)
    )
    assert not ch.is_available()


def test_unguarded_keeps_last():
    """With guard=False the last of several writes is kept."""
    ch = UntrackedValue(int, guard=False)
    assert ch.update([1, 2]) is True
    assert ch.get() == 2


def test_checkpoint_is_always_missing():
    """checkpoint() returns MISSING even with a value."""
    ch = UntrackedValue(int)
    ch.update([1])
    assert ch.checkpoint() is MISSING


def test_from_checkpoint_ignores_input():
    """from_checkpoint() gives an empty channel of the same spec whatever it is passed."""
    spec = UntrackedValue(int, guard=False, key="u")
    ch = spec.from_checkpoint(42)
    assert not ch.is_available()
    assert (ch.guard, ch.key, ch.typ) == (False, "u", int)


def test_copy_keeps_value():
    """copy() keeps the value (copies are in-run) and is independent."""
    ch = UntrackedValue(int, guard=False)
    ch.update([1])
    cp = ch.copy()
    assert cp.get() == 1 and cp.guard is False
    cp.update([2])
    assert ch.get() == 1


def test_equality_compares_guard():
    """UntrackedValue channels are equal when their guard flags match."""
    assert UntrackedValue(int) == UntrackedValue(str)
    assert UntrackedValue(int) != UntrackedValue(int, guard=False)


def test_types_and_slots():
    """ValueType/UpdateType are typ, and instances have no __dict__."""
    ch = UntrackedValue(int)
    assert ch.ValueType is int and ch.UpdateType is int
    assert not hasattr(ch, "__dict__")
