"""``AnyValue``: last write wins, for writes assumed to be equal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self

from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["AnyValue"]

_new = object.__new__


class AnyValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the last value written; several writes in one step are allowed.

    Meant for writes that are all equal, so keeping the last loses nothing. An empty
    update clears the value (and returns True if there was one).
    """

    __slots__ = ("value",)

    def idle_kind(self) -> IdleKind:
        return "volatile"

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

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
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Keep the last write; an empty update clears. True if anything changed."""
        if values:
            self.value = values[-1]
            return True
        if self.value is MISSING:
            return False
        self.value = MISSING
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
