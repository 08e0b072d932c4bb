"""``LastValueAfterFinish``: the trigger channel of a ``defer=True`` node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self

from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["LastValueAfterFinish"]

_new = object.__new__


class LastValueAfterFinish(Generic[Value], BaseChannel[Value, Value, tuple[Value, bool]]):
    """Stores the last value written, readable only after ``finish()``.

    Writes are never rejected (the last one wins) and mark the value unfinished again.
    ``finish()`` releases a held value; ``consume()`` then clears it, so the deferred node
    runs once per release. Checkpoint form: ``(value, finished)``.
    """

    __slots__ = ("value", "finished")

    def idle_kind(self) -> IdleKind:
        return "finish"

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValueAfterFinish)

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same value and finished flag."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.value = self.value
        new.finished = self.finished
        return new

    def checkpoint(self) -> tuple[Any, bool] | Any:
        """``(value, finished)``, or ``MISSING`` when no value is held."""
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Restore ``(value, finished)``; a bare value is taken as already finished."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.value = MISSING
        new.finished = False
        if checkpoint is not MISSING:
            if (
                type(checkpoint) in (tuple, list)
                and len(checkpoint) == 2
                and type(checkpoint[1]) is bool
            ):
                new.value, new.finished = checkpoint
            else:  # e.g. written by an EphemeralValue before the node became deferred
                new.value = checkpoint
                new.finished = True
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Hold the last write (unfinished); ``False`` for an empty update."""
        if not values:
            return False
        self.value = values[-1]
        self.finished = False
        return True

    def consume(self) -> bool:
        """Clear a released value (the deferred node ran); True if it was released."""
        if self.finished:
            self.finished = False
            self.value = MISSING
            return True
        return False

    def finish(self) -> bool:
        """Release a held value; True if one was held and not yet released."""
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False

    def get(self) -> Value:
        """The value once released; ``EmptyChannelError`` before."""
        if self.finished and self.value is not MISSING:
            return self.value
        raise EmptyChannelError()

    def is_available(self) -> bool:
        """True when a value is held and released."""
        return self.finished and self.value is not MISSING
