"""LastValue: the default channel of a state key (at most one write per step)."""

import pytest

from stepgraph.channels import AnyValue, LastValue, LastValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError, StepgraphError

LANGGRAPH_TEXT = (
    "At key 'x': Can receive only one value per step. "
    "Use an Annotated key to handle multiple values."
)


def test_new_channel_is_empty():
    """A fresh LastValue is unavailable and get() raises EmptyChannelError."""
    ch = LastValue(int, "x")
    assert ch.is_available() is False
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_empty_update_returns_false():
    """update([]) returns False on an empty channel and leaves it empty."""
    ch = LastValue(int, "x")
    assert ch.update([]) is False
    assert not ch.is_available()


def test_empty_update_keeps_value():
    """update([]) returns False and keeps a stored value."""
    ch = LastValue(int, "x")
    ch.update([1])
    assert ch.update([]) is False
    assert ch.get() == 1


def test_single_write_sets_value():
    """One write stores the value and returns True."""
    ch = LastValue(int, "x")
    assert ch.update([5]) is True
    assert ch.is_available() is True
    assert ch.get() == 5


def test_later_step_replaces_value():
    """A write in a later step replaces the value."""
    ch = LastValue(int, "x")
    ch.update([1])
    assert ch.update([2]) is True
    assert ch.get() == 2


def test_none_is_a_value():
    """None written to the channel counts as a value."""
    ch = LastValue(object, "x")
    ch.update([None])
    assert ch.is_available()
    assert ch.get() is None


def test_two_writes_raise_coded_error():
    """Two writes in one step raise InvalidUpdateError SG201 with LangGraph's text and a hint."""
    ch = LastValue(int, "x")
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([1, 2])
    exc = info.value
    assert isinstance(exc, StepgraphError)
    assert exc.code == "SG201"
    assert LANGGRAPH_TEXT in str(exc)
    assert exc.hint and "Hint:" in str(exc)


def test_failed_update_keeps_value():
    """A rejected step leaves the previous value in place."""
    ch = LastValue(int, "x")
    ch.update([1])
    with pytest.raises(InvalidUpdateError):
        ch.update([2, 3, 4])
    assert ch.get() == 1


def test_update_accepts_tuples():
    """update() takes any sequence, tuples included."""
    ch = LastValue(int, "x")
    assert ch.update((7,)) is True
    assert ch.get() == 7


def test_consume_and_finish_are_noops():
    """consume() and finish() return False and keep the value."""
    ch = LastValue(int, "x")
    ch.update([3])
    assert ch.consume() is False
    assert ch.finish() is False
    assert ch.get() == 3


def test_checkpoint_is_value_or_missing():
    """checkpoint() is the value itself, or MISSING when empty."""
    ch = LastValue(int, "x")
    assert ch.checkpoint() is MISSING
    ch.update([4])
    assert ch.checkpoint() == 4


def test_from_checkpoint_restores_value_and_spec():
    """from_checkpoint() gives a new channel with the value, typ and key."""
    spec = LastValue(int, "x")
    ch = spec.from_checkpoint(9)
    assert ch is not spec
    assert (ch.get(), ch.typ, ch.key) == (9, int, "x")
    assert not spec.is_available()


def test_from_checkpoint_missing_is_empty():
    """from_checkpoint(MISSING) gives an empty channel."""
    assert not LastValue(int, "x").from_checkpoint(MISSING).is_available()


def test_copy_is_independent():
    """copy() keeps the value; updating the copy does not touch the original."""
    ch = LastValue(int, "x")
    ch.update([1])
    cp = ch.copy()
    assert (cp.get(), cp.key, cp.typ) == (1, "x", int)
    cp.update([2])
    assert ch.get() == 1


def test_equality_ignores_type():
    """Any LastValue equals any other LastValue, and nothing else."""
    assert LastValue(int) == LastValue(str, "k")
    assert LastValue(int) != AnyValue(int)
    assert LastValue(int) != LastValueAfterFinish(int)


def test_value_and_update_types():
    """ValueType and UpdateType are the channel's typ."""
    ch = LastValue(int)
    assert ch.ValueType is int
    assert ch.UpdateType is int


def test_slots_no_instance_dict():
    """Instances use __slots__ (no __dict__)."""
    assert not hasattr(LastValue(int), "__dict__")


def test_repr_shows_key_and_value():
    """repr() names the class, key and value."""
    ch = LastValue(int, "x")
    ch.update([3])
    assert repr(ch) == "LastValue(key='x', value=3)"
    assert repr(LastValue(int, "y")) == "LastValue(key='y', value=MISSING)"


def test_after_finish_reexported_from_module():
    """LastValueAfterFinish is importable from the LangGraph-style module path."""
    from stepgraph.channels.last_value import LastValueAfterFinish as reexported

    assert reexported is LastValueAfterFinish
