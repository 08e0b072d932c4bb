"""``Topic``: a pub/sub list channel; also the per-step queue of ``Send`` packets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Self, Union

from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["Topic"]

_new = object.__new__


class Topic(Generic[Value], BaseChannel[Sequence[Value], Value | list[Value], list[Value]]):
    """Collects the values written; each write is a value or a ``list`` of values.

    Lists are flattened one level (tuples and other sequences are kept as single values).
    With ``accumulate=False`` (default) every update replaces the list by this step's
    values, so an empty update on a non-empty topic empties it and returns True
    ("emptying is a change"). With ``accumulate=True`` values pile up across steps and an
    empty update returns False. An empty topic is unavailable.
    """

    __slots__ = ("values", "accumulate")

    def idle_kind(self) -> IdleKind:
        """Accumulating topics keep their values; the others empty at the next step."""
        return "steady" if self.accumulate else "volatile"

    # ``values`` is never mutated in place (each change binds a new list), so copies and
    # checkpoints can share it safely.

    def __init__(self, typ: Any, accumulate: bool = False, *, key: str = "") -> None:
        super().__init__(typ, key)
        self.accumulate = accumulate
        self.values: list[Value] = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topic) and other.accumulate == self.accumulate

    def __repr__(self) -> str:
        return f"Topic(key={self.key!r}, accumulate={self.accumulate}, values={self.values!r})"

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """``Sequence[typ]``."""
        return Sequence[self.typ]  # type: ignore[name-defined]

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """``typ | list[typ]``."""
        return Union[self.typ, list[self.typ]]  # type: ignore[name-defined]  # noqa: UP007

    def copy(self) -> Self:
        """An independent channel; the list is shared, as it is never mutated in place."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.accumulate = self.accumulate
        new.values = self.values
        return new

    def checkpoint(self) -> list[Value] | Any:
        """The stored list itself (no copy; later updates never mutate it), or ``MISSING``.

        An empty topic checkpoints as ``MISSING``: there is nothing to store.
        """
        return self.values or MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Restore a list; the legacy ``(typ, values)`` tuple form is accepted too."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.accumulate = self.accumulate
        if checkpoint is MISSING or checkpoint is None:
            new.values = []
        elif type(checkpoint) is tuple:
            new.values = list(checkpoint[1])
        else:
            new.values = list(checkpoint)
        return new

    def update(self, values: Sequence[Value | list[Value]]) -> bool:
        """Apply one step's writes; True if the list changed (emptying counts)."""
        if not values:
            if self.accumulate or not self.values:
                return False
            self.values = []
            return True
        flat: list[Value] = []
        for value in values:
            if isinstance(value, list):
                flat.extend(value)
            else:
                flat.append(value)
        if self.accumulate:
            if not flat:
                return False
            self.values = self.values + flat if self.values else flat
            return True
        changed = bool(flat) or bool(self.values)
        self.values = flat
        return changed

    def get(self) -> Sequence[Value]:
        """A copy of the values; ``EmptyChannelError`` when there are none."""
        if self.values:
            return list(self.values)
        raise EmptyChannelError()

    def is_available(self) -> bool:
        """True when the topic holds at least one value."""
        return bool(self.values)
