"""``LastValue``: the default channel of a state key, one write per step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import too_many_values
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.channels.last_value_after_finish import LastValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["LastValue", "LastValueAfterFinish"]  # the latter re-exported for LangGraph paths

_new = object.__new__


class LastValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the last value written; at most one write per step.

    Two or more writes in one step raise ``InvalidUpdateError`` (code ``SG201``). An empty
    update keeps the value. Any two ``LastValue`` channels compare equal.
    """

    __slots__ = ("value",)

    def idle_kind(self) -> IdleKind:
        return "steady"

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValue)

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same value (no checkpoint round trip)."""
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
        """Store the single write; ``False`` for none; ``InvalidUpdateError`` for several."""
        if len(values) == 1:
            self.value = values[0]
            return True
        if not values:
            return False
        raise too_many_values(self.key, len(values))

    def get(self) -> Value:
        """The stored value; ``EmptyChannelError`` when never written."""
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        """True once a value was written."""
        return self.value is not MISSING
