"""The stepgraph.channels package: exports and the shared BaseChannel contract."""

import operator

import pytest

import stepgraph.channels as channels
from stepgraph.channels import BaseChannel, EmptyChannelError
from stepgraph.constants import MISSING

EXPECTED = {
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EmptyChannelError",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
    "UntrackedValue",
}

ALL_CHANNELS = [
    channels.LastValue(int),
    channels.LastValueAfterFinish(int),
    channels.AnyValue(int),
    channels.UntrackedValue(int),
    channels.EphemeralValue(int),
    channels.Topic(int),
    channels.BinaryOperatorAggregate(int, operator.add),
    channels.NamedBarrierValue(str, {"a"}),
    channels.NamedBarrierValueAfterFinish(str, {"a"}),
    channels.DeltaChannel(lambda value, writes: [*value, *writes]),
]


def test_all_is_sorted_and_complete():
    """__all__ lists exactly the public names, sorted."""
    assert channels.__all__ == sorted(EXPECTED)
    for name in channels.__all__:
        assert hasattr(channels, name)


def test_empty_channel_error_is_the_errors_one():
    """EmptyChannelError is re-exported from stepgraph.errors."""
    from stepgraph import errors

    assert EmptyChannelError is errors.EmptyChannelError


@pytest.mark.parametrize("ch", ALL_CHANNELS, ids=lambda c: type(c).__name__)
def test_every_channel_is_a_slotted_base_channel(ch):
    """Every channel subclasses BaseChannel and has no instance __dict__."""
    assert isinstance(ch, BaseChannel)
    assert not hasattr(ch, "__dict__")


@pytest.mark.parametrize("ch", ALL_CHANNELS, ids=lambda c: type(c).__name__)
def test_every_channel_copy_keeps_class_and_key(ch):
    """copy() and from_checkpoint() return the same class with the same key and typ."""
    for other in (ch.copy(), ch.from_checkpoint(MISSING)):
        assert type(other) is type(ch)
        assert (other.key, other.typ) == (ch.key, ch.typ)
        assert other == ch


class _Minimal(BaseChannel):
    """A channel using every default of BaseChannel."""

    __slots__ = ("value",)

    def __init__(self, typ, key=""):
        super().__init__(typ, key)
        self.value = MISSING

    ValueType = property(lambda self: self.typ)
    UpdateType = property(lambda self: self.typ)

    def from_checkpoint(self, checkpoint):
        new = _Minimal(self.typ, self.key)
        new.value = checkpoint
        return new

    def get(self):
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def update(self, values):
        if not values:
            return False
        self.value = values[-1]
        return True


def test_base_defaults():
    """BaseChannel's default checkpoint/copy/is_available/consume/finish/repr work."""
    ch = _Minimal(int, "m")
    assert ch.checkpoint() is MISSING and not ch.is_available()
    assert repr(ch) == "_Minimal(key='m', value=MISSING)"
    ch.update([3])
    assert ch.checkpoint() == 3 and ch.is_available()
    assert ch.copy().get() == 3
    assert ch.consume() is False and ch.finish() is False
    assert repr(ch) == "_Minimal(key='m', value=3)"
