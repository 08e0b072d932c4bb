"""NamedBarrierValue: the join channel of a waiting edge."""

import pytest

from stepgraph.channels import NamedBarrierValue, NamedBarrierValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError


def _barrier():
    return NamedBarrierValue(str, {"a", "b"}, key="join:a+b:c")


def test_unavailable_until_all_names_seen():
    """The barrier is unavailable (get raises) until every name was written."""
    ch = _barrier()
    assert ch.update(["a"]) is True
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()
    assert ch.update(["b"]) is True
    assert ch.is_available()
    assert ch.get() is None


def test_update_true_only_for_new_names():
    """update() returns True only when a new name arrives."""
    ch = _barrier()
    assert ch.update(["a", "a"]) is True
    assert ch.update(["a"]) is False
    assert ch.update([]) is False


def test_unknown_name_raises():
    """A name outside names raises InvalidUpdateError SG203 with LangGraph's text."""
    ch = _barrier()
    with pytest.raises(InvalidUpdateError) as info:
        ch.update(["a", "z"])
    assert info.value.code == "SG203"
    assert "At key 'join:a+b:c': Value z not in {'a', 'b'}" in str(info.value)
    assert ch.seen == set()


def test_consume_resets_complete_barrier():
    """consume() on a complete barrier resets it and returns True, so it can fire again."""
    ch = _barrier()
    ch.update(["a", "b"])
    assert ch.consume() is True
    assert not ch.is_available()
    assert ch.update(["b"]) is True
    assert ch.update(["a"]) is True
    assert ch.is_available()


def test_consume_incomplete_returns_false():
    """consume() on an incomplete barrier returns False and keeps what was seen."""
    ch = _barrier()
    ch.update(["a"])
    assert ch.consume() is False
    assert ch.seen == {"a"}


def test_finish_is_noop():
    """finish() returns False."""
    ch = _barrier()
    ch.update(["a", "b"])
    assert ch.finish() is False


def test_empty_names_is_always_available():
    """A barrier waiting for no names is available at once."""
    assert NamedBarrierValue(str, set()).is_available()


def test_checkpoint_is_seen_or_missing():
    """checkpoint() is the set of names seen, MISSING when none."""
    ch = _barrier()
    assert ch.checkpoint() is MISSING
    ch.update(["a"])
    assert ch.checkpoint() == {"a"}


def test_from_checkpoint_restores_seen():
    """from_checkpoint restores names seen from any iterable, keeping names and key."""
    spec = _barrier()
    ch = spec.from_checkpoint(["a", "b"])
    assert ch.is_available() and ch.key == "join:a+b:c"
    assert ch.names == {"a", "b"}
    assert not spec.is_available()
    assert not spec.from_checkpoint(MISSING).is_available()


def test_from_checkpoint_drops_stale_names():
    """Names that the barrier no longer waits for are dropped on restore."""
    ch = _barrier().from_checkpoint({"a", "old"})
    assert ch.seen == {"a"}


def test_checkpoint_is_not_mutated_by_later_updates():
    """A taken checkpoint does not change when later names arrive."""
    ch = _barrier()
    ch.update(["a"])
    saved = ch.checkpoint()
    ch.update(["b"])
    assert saved == {"a"}


def test_copy_is_independent():
    """copy() keeps the names seen; updating the copy leaves the original."""
    ch = _barrier()
    ch.update(["a"])
    cp = ch.copy()
    cp.update(["b"])
    assert cp.is_available() and not ch.is_available()


def test_equality_compares_names():
    """Barriers are equal when they wait for the same names."""
    assert _barrier() == NamedBarrierValue(int, ["b", "a"])
    assert _barrier() != NamedBarrierValue(str, {"a"})
    assert _barrier() != NamedBarrierValueAfterFinish(str, {"a", "b"})


def test_types_slots_and_repr():
    """ValueType/UpdateType are typ, no __dict__, and repr shows names and seen."""
    ch = NamedBarrierValue(str, {"a"}, key="j")
    assert ch.ValueType is str and ch.UpdateType is str
    assert not hasattr(ch, "__dict__")
    assert repr(ch) == "NamedBarrierValue(key='j', names=frozenset({'a'}), seen=set())"


def test_after_finish_reexported_from_module():
    """NamedBarrierValueAfterFinish is importable from the LangGraph-style module path."""
    from stepgraph.channels.named_barrier_value import NamedBarrierValueAfterFinish as again

    assert again is NamedBarrierValueAfterFinish
