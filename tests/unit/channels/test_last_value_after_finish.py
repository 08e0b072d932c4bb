"""LastValueAfterFinish: the trigger channel of defer=True nodes."""

import pytest

from stepgraph.channels import LastValue, LastValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError


def _written(value=1):
    ch = LastValueAfterFinish(object, "d")
    ch.update([value])
    return ch


def test_write_is_hidden_until_finish():
    """A written value is unavailable and get() raises until finish()."""
    ch = _written()
    assert ch.is_available() is False
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_finish_releases_value():
    """finish() on a held value returns True and makes it readable."""
    ch = _written(5)
    assert ch.finish() is True
    assert ch.is_available() is True
    assert ch.get() == 5


def test_finish_twice_returns_false():
    """A second finish() returns False."""
    ch = _written()
    ch.finish()
    assert ch.finish() is False
    assert ch.is_available()


def test_finish_on_empty_returns_false():
    """finish() without a value returns False and stays unavailable."""
    ch = LastValueAfterFinish(int)
    assert ch.finish() is False
    assert not ch.is_available()


def test_consume_before_finish_keeps_value():
    """consume() before finish() returns False and keeps the held value."""
    ch = _written(3)
    assert ch.consume() is False
    ch.finish()
    assert ch.get() == 3


def test_consume_after_finish_clears():
    """consume() after finish() clears the value and returns True."""
    ch = _written()
    ch.finish()
    assert ch.consume() is True
    assert not ch.is_available()
    assert ch.checkpoint() is MISSING
    assert ch.consume() is False
    assert ch.finish() is False


def test_update_after_finish_hides_value_again():
    """A new write after finish() is unfinished again."""
    ch = _written(1)
    ch.finish()
    assert ch.update([2]) is True
    assert not ch.is_available()
    ch.finish()
    assert ch.get() == 2


def test_several_writes_last_wins():
    """Several writes in one step are allowed; the last one is kept."""
    ch = LastValueAfterFinish(int)
    assert ch.update([1, 2, 3]) is True
    ch.finish()
    assert ch.get() == 3


def test_empty_update_returns_false():
    """update([]) returns False and keeps the released value."""
    ch = _written(4)
    ch.finish()
    assert ch.update([]) is False
    assert ch.get() == 4


def test_checkpoint_forms():
    """checkpoint() is MISSING when empty, else (value, finished)."""
    ch = LastValueAfterFinish(int)
    assert ch.checkpoint() is MISSING
    ch.update([7])
    assert ch.checkpoint() == (7, False)
    ch.finish()
    assert ch.checkpoint() == (7, True)


def test_from_checkpoint_round_trip():
    """from_checkpoint((value, finished)) restores both, keeping the key."""
    spec = LastValueAfterFinish(int, "d")
    held = spec.from_checkpoint((7, False))
    assert not held.is_available() and held.finish() and held.get() == 7
    released = spec.from_checkpoint([8, True])
    assert released.get() == 8 and released.key == "d"
    assert not spec.from_checkpoint(MISSING).is_available()


def test_from_checkpoint_bare_value_is_finished():
    """A bare (non-pair) checkpoint value is restored as already finished."""
    ch = LastValueAfterFinish(object).from_checkpoint("x")
    assert ch.get() == "x"


def test_copy_is_independent():
    """copy() keeps value and flag; consuming the copy leaves the original."""
    ch = _written(1)
    ch.finish()
    cp = ch.copy()
    assert cp.get() == 1
    cp.consume()
    assert ch.get() == 1


def test_equality():
    """LastValueAfterFinish equals any LastValueAfterFinish, not a LastValue."""
    assert LastValueAfterFinish(int) == LastValueAfterFinish(str)
    assert LastValueAfterFinish(int) != LastValue(int)


def test_types_and_slots():
    """ValueType/UpdateType are typ, and instances have no __dict__."""
    ch = LastValueAfterFinish(int)
    assert ch.ValueType is int and ch.UpdateType is int
    assert not hasattr(ch, "__dict__")
