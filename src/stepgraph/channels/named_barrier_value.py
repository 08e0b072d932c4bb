"""``NamedBarrierValue``: the join channel of a waiting edge ``add_edge([a, b], c)``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import unknown_name
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.channels.named_barrier_value_after_finish import NamedBarrierValueAfterFinish
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

# The AfterFinish variant is re-exported here so LangGraph-style import paths work.
__all__ = ["NamedBarrierValue", "NamedBarrierValueAfterFinish"]

_new = object.__new__


class NamedBarrierValue(Generic[Value], BaseChannel[Value, Value, set[Value]]):
    """Available (with value ``None``) once every name in ``names`` has been written.

    Each start node of the waiting edge writes its own name; a name not in ``names``
    raises ``InvalidUpdateError`` (``SG203``). ``update`` is True only when a new name
    arrives. ``consume()`` (the joined node ran) resets the barrier so it can fire again.
    Checkpoint form: the set of names seen.
    """

    __slots__ = ("names", "seen")

    def idle_kind(self) -> IdleKind:
        return "steady"

    def __init__(self, typ: Any, names: Iterable[Value], *, key: str = "") -> None:
        super().__init__(typ, key)
        self.names: frozenset[Value] = frozenset(names)
        # Never mutated in place (a new set per new name), so copies may share it.
        self.seen: set[Value] = set()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValue) and other.names == self.names

    def __repr__(self) -> str:
        return f"NamedBarrierValue(key={self.key!r}, names={self.names!r}, seen={self.seen!r})"

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the (``None``) value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write (a name)."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same names seen."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.names = self.names
        new.seen = self.seen
        return new

    def checkpoint(self) -> set[Value] | Any:
        """The set of names seen, or ``MISSING`` when none was."""
        return self.seen or MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Restore the names seen (any iterable; names no longer waited for are dropped)."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.names = self.names
        new.seen = set() if checkpoint is MISSING else set(checkpoint) & self.names
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Record the names written; True if a new one arrived."""
        names = self.names
        seen = self.seen
        updated = False
        for value in values:
            if value not in seen:
                if value not in names:
                    raise unknown_name(self.key, value, names)
                seen = seen | {value}
                updated = True
        if updated:
            self.seen = seen
        return updated

    def get(self) -> Value:
        """``None`` once every name was seen; ``EmptyChannelError`` before."""
        if len(self.seen) != len(self.names):
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        """True once every name was seen."""
        return len(self.seen) == len(self.names)

    def consume(self) -> bool:
        """Reset a complete barrier; True if it was complete."""
        if len(self.seen) == len(self.names):
            self.seen = set()
            return True
        return False
