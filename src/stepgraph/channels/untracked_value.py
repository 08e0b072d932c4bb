"""``UntrackedValue``: a last-value channel that is never checkpointed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import guard_violated
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["UntrackedValue"]

_new = object.__new__


class UntrackedValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the last value written but never persists it.

    ``checkpoint()`` is always ``MISSING`` and ``from_checkpoint`` ignores its input, so the
    value lives only for the current run. With ``guard=True`` (default) two or more writes
    in one step raise ``InvalidUpdateError`` (``SG201``); with ``guard=False`` the last wins.
    An empty update keeps the value.
    """

    __slots__ = ("value", "guard")

    def idle_kind(self) -> IdleKind:
        return "steady"

    def __init__(self, typ: Any, guard: bool = True, *, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same value (copies do keep the value)."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.guard = self.guard
        new.value = self.value
        return new

    def checkpoint(self) -> Any:
        """Always ``MISSING``: the value is never saved."""
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """An empty channel of this spec; ``checkpoint`` is ignored."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.guard = self.guard
        new.value = MISSING
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Store the (last) write; ``False`` for none; guarded against several."""
        if len(values) == 1:
            self.value = values[0]
            return True
        if not values:
            return False
        if self.guard:
            raise guard_violated("UntrackedValue", self.key, len(values))
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
