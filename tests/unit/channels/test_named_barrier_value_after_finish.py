"""NamedBarrierValueAfterFinish: a waiting-edge join into a deferred node."""

import pytest

from stepgraph.channels import NamedBarrierValue, NamedBarrierValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError


def _complete():
    ch = NamedBarrierValueAfterFinish(str, {"a", "b"}, key="j")
    ch.update(["a", "b"])
    return ch


def test_complete_barrier_waits_for_finish():
    """A complete barrier stays unavailable until finish()."""
    ch = _complete()
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()
    assert ch.finish() is True
    assert ch.is_available() and ch.get() is None


def test_finish_on_incomplete_returns_false():
    """finish() on an incomplete barrier returns False."""
    ch = NamedBarrierValueAfterFinish(str, {"a", "b"})
    ch.update(["a"])
    assert ch.finish() is False
    assert not ch.is_available()


def test_finish_twice_returns_false():
    """A second finish() returns False."""
    ch = _complete()
    ch.finish()
    assert ch.finish() is False


def test_consume_before_finish_returns_false():
    """consume() before finish() returns False and keeps the names seen."""
    ch = _complete()
    assert ch.consume() is False
    assert ch.seen == {"a", "b"}


def test_consume_after_finish_resets():
    """consume() after finish() resets seen and finished and returns True."""
    ch = _complete()
    ch.finish()
    assert ch.consume() is True
    assert ch.seen == set() and ch.finished is False
    assert ch.checkpoint() is MISSING


def test_update_return_values():
    """update() is True only for new names; unknown names raise SG203."""
    ch = NamedBarrierValueAfterFinish(str, {"a", "b"}, key="j")
    assert ch.update(["a"]) is True
    assert ch.update(["a"]) is False
    with pytest.raises(InvalidUpdateError) as info:
        ch.update(["z"])
    assert info.value.code == "SG203"
    assert "At key 'j': Value z not in {'a', 'b'}" in str(info.value)


def test_checkpoint_forms():
    """checkpoint() is MISSING when nothing seen, else (seen, finished)."""
    ch = NamedBarrierValueAfterFinish(str, {"a", "b"})
    assert ch.checkpoint() is MISSING
    ch.update(["a"])
    assert ch.checkpoint() == ({"a"}, False)
    ch.update(["b"])
    ch.finish()
    assert ch.checkpoint() == ({"a", "b"}, True)


def test_from_checkpoint_round_trip():
    """from_checkpoint restores (seen, finished) from tuple or JSON-like list form."""
    spec = NamedBarrierValueAfterFinish(str, {"a", "b"}, key="j")
    ch = spec.from_checkpoint((["a", "b"], True))
    assert ch.is_available() and ch.key == "j"
    held = spec.from_checkpoint([["a", "b"], False])
    assert not held.is_available() and held.finish()
    assert not spec.from_checkpoint(MISSING).is_available()


def test_from_checkpoint_bare_seen():
    """A bare collection of names (a NamedBarrierValue checkpoint) restores unfinished."""
    ch = NamedBarrierValueAfterFinish(str, {"a", "b"}).from_checkpoint({"a", "b"})
    assert not ch.is_available()
    assert ch.finish() is True


def test_copy_is_independent():
    """copy() keeps seen and finished; consuming the copy leaves the original."""
    ch = _complete()
    ch.finish()
    cp = ch.copy()
    assert cp.is_available()
    cp.consume()
    assert ch.is_available()


def test_equality_compares_names():
    """Equal when waiting for the same names; never equal to a plain NamedBarrierValue."""
    assert _complete() == NamedBarrierValueAfterFinish(int, {"a", "b"})
    assert _complete() != NamedBarrierValueAfterFinish(str, {"a"})
    assert _complete() != NamedBarrierValue(str, {"a", "b"})


def test_types_slots_and_repr():
    """ValueType/UpdateType are typ, no __dict__, and repr shows the finished flag."""
    ch = NamedBarrierValueAfterFinish(str, {"a"}, key="j")
    assert ch.ValueType is str and ch.UpdateType is str
    assert not hasattr(ch, "__dict__")
    assert repr(ch).endswith("finished=False)")
