"""``NamedBarrierValueAfterFinish``: the join channel of a waiting edge into a deferred node."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import unknown_name
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["NamedBarrierValueAfterFinish"]

_new = object.__new__


class NamedBarrierValueAfterFinish(
    Generic[Value], BaseChannel[Value, Value, tuple[set[Value], bool]]
):
    """Like ``NamedBarrierValue``, but a complete barrier is available only after ``finish()``.

    ``finish()`` releases a complete barrier; ``consume()`` then resets it. A name not in
    ``names`` raises ``InvalidUpdateError`` (``SG203``). Checkpoint form:
    ``(seen, finished)``.
    """

    __slots__ = ("names", "seen", "finished")

    def idle_kind(self) -> IdleKind:
        return "finish"

    def __init__(self, typ: Any, names: Iterable[Value], *, key: str = "") -> None:
        super().__init__(typ, key)
        self.names: frozenset[Value] = frozenset(names)
        # Never mutated in place (a new set per new name), so copies may share it.
        self.seen: set[Value] = set()
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValueAfterFinish) and other.names == self.names

    def __repr__(self) -> str:
        return (
            f"NamedBarrierValueAfterFinish(key={self.key!r}, names={self.names!r}, "
            f"seen={self.seen!r}, finished={self.finished})"
        )

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the (``None``) value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write (a name)."""
        return self.typ

    def copy(self) -> Self:
        """An independent channel with the same names seen and finished flag."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.names = self.names
        new.seen = self.seen
        new.finished = self.finished
        return new

    def checkpoint(self) -> tuple[set[Value], bool] | Any:
        """``(seen, finished)``, or ``MISSING`` when nothing was seen."""
        if not self.seen and not self.finished:
            return MISSING
        return (self.seen, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Restore ``(seen, finished)``; a bare collection of names is taken as unfinished."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.names = self.names
        new.seen = set()
        new.finished = False
        if checkpoint is not MISSING:
            if (
                type(checkpoint) in (tuple, list)
                and len(checkpoint) == 2
                and type(checkpoint[1]) is bool
            ):
                seen, new.finished = checkpoint
            else:
                seen = checkpoint
            new.seen = set(seen) & self.names
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
        """``None`` once complete and released; ``EmptyChannelError`` before."""
        if not self.finished or len(self.seen) != len(self.names):
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        """True once complete and released."""
        return self.finished and len(self.seen) == len(self.names)

    def consume(self) -> bool:
        """Reset a released barrier; True if it was released."""
        if self.finished and len(self.seen) == len(self.names):
            self.finished = False
            self.seen = set()
            return True
        return False

    def finish(self) -> bool:
        """Release a complete barrier; True if that changed it."""
        if not self.finished and len(self.seen) == len(self.names):
            self.finished = True
            return True
        return False
