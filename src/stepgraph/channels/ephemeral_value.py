"""``EphemeralValue``: a value visible for exactly the step after it was written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import guard_violated
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["EphemeralValue"]

_new = object.__new__


class EphemeralValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the value written in the previous step and clears it on the next update.

    The engine calls ``update([])`` on every available channel nobody wrote, which clears
    this one (returning True). With ``guard=True`` (default) two or more writes in one
    step raise ``InvalidUpdateError`` (``SG201``); ``guard=False`` keeps the last, as for
    the ``branch:to:*`` trigger channels. Backs ``START`` too.
    """

    __slots__ = ("value", "guard")

    def idle_kind(self) -> IdleKind:
        return "volatile"

    def __init__(self, typ: Any, guard: bool = True, *, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EphemeralValue) and other.guard == self.guard

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same value."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.guard = self.guard
        new.value = self.value
        return new

    def checkpoint(self) -> Any:
        """The value itself, or ``MISSING``."""
        return self.value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A new channel of this spec holding ``checkpoint`` (``MISSING``: empty)."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.guard = self.guard
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Store this step's write, or clear on an empty update; True if anything changed."""
        if len(values) == 1:
            self.value = values[0]
            return True
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        if self.guard:
            raise guard_violated("EphemeralValue", self.key, len(values))
        self.value = values[-1]
        return True

    def get(self) -> Value:
        """The stored value; ``EmptyChannelError`` when empty."""
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        """True while a value is held."""
        return self.value is not MISSING
