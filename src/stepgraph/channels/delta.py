"""``DeltaChannel``: a reducer channel whose checkpoints store writes, not values.

A growing value (a long message history, a file map) stored whole at every step costs
storage quadratic in its length. A ``DeltaChannel`` key is left out of a checkpoint's
``channel_values``: its value is rebuilt by folding the writes saved along the thread's
ancestor checkpoints (``BaseCheckpointSaver.get_delta_channel_history``) onto the nearest
stored value. The value is stored whole every ``snapshot_frequency`` writes, after an
``Overwrite``, in checkpoints ``update_state`` or a fork makes, and with
``durability="exit"`` (whose single checkpoint has no ancestors to fold).

The reducer takes the value and a *batch* of writes, ``reducer(value, [w1, w2, ...])``,
and must not care how writes are batched: ``reducer(reducer(v, xs), ys) ==
reducer(v, xs + ys)``, since a rebuild folds several steps' writes in one call.

A key that used to be a plain reducer key (``BinaryOperatorAggregate``) can switch to a
``DeltaChannel`` on an existing thread: the last stored whole value is the starting point.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Callable, Sequence
from typing import Any, Generic, Self

from stepgraph.channels._errors import too_many_overwrites
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.channels.binop import get_overwrite, initial_factory, operators_equal
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

__all__ = ["DeltaChannel"]

_new = object.__new__


class DeltaChannel(Generic[Value], BaseChannel[Any, Any, Any]):
    """Folds each step's writes with ``reducer(value, writes)``; checkpoints keep the writes.

    Args:
        reducer: ``(value, list_of_writes) -> new value``, batching-invariant (see module).
        typ: the value type; inferred from ``Annotated[T, DeltaChannel(...)]``. The value
            starts as ``typ()`` (an empty list, dict...).
        snapshot_frequency: store the whole value after this many writes (default 100).
    """

    __slots__ = ("value", "reducer", "snapshot_frequency", "pending")

    def idle_kind(self) -> IdleKind:
        return "steady"

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: Any = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        if isinstance(snapshot_frequency, bool) or not isinstance(snapshot_frequency, int) or (
            snapshot_frequency <= 0
        ):
            raise ValueError(
                f"snapshot_frequency must be a positive int, got {snapshot_frequency!r}"
            )
        super().__init__(typ if typ is not None else list)
        self.reducer = reducer
        self.snapshot_frequency = snapshot_frequency
        self.value: Any = MISSING
        self.pending = 0
        """Writes folded since the value was last stored whole."""

    def with_type(self, typ: Any) -> DeltaChannel[Value]:
        """This channel for a key annotated ``typ`` (``Annotated[typ, DeltaChannel(...)]``)."""
        return DeltaChannel(self.reducer, typ, snapshot_frequency=self.snapshot_frequency)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and self.snapshot_frequency == other.snapshot_frequency
            and operators_equal(self.reducer, other.reducer)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = getattr(self.reducer, "__name__", repr(self.reducer))
        return f"DeltaChannel(key={self.key!r}, reducer={name}, value={self.value!r})"

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        return self.typ

    def _empty(self) -> Any:
        return initial_factory(self.typ)()

    def _blank(self) -> Self:
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.reducer = self.reducer
        new.snapshot_frequency = self.snapshot_frequency
        new.pending = 0
        return new

    def copy(self) -> Self:
        new = self._blank()
        new.value = self.value if self.value is MISSING else _copy.copy(self.value)
        new.pending = self.pending
        return new

    def checkpoint(self) -> Any:
        """Always ``MISSING``: the engine decides when to store the value whole."""
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A channel starting from a stored whole value (``MISSING``: the empty value).

        ``None`` is a value like any other: it is what the reducer then starts from.
        """
        new = self._blank()
        new.value = self._empty() if checkpoint is MISSING else checkpoint
        return new

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Fold saved ``(task_id, channel, value)`` writes, oldest first, in one reducer call.

        An ``Overwrite`` among them resets the value; only the writes after the last one
        are folded.
        """
        values = [w[2] for w in writes]
        if not values:
            return
        base, start = self.value, 0
        for i, value in enumerate(values):
            is_overwrite, replacement = get_overwrite(value)
            if is_overwrite:
                base = self._empty() if replacement is None else _copy.copy(replacement)
                start = i + 1
        rest = values[start:]
        self.value = self.reducer(base, rest) if rest else base
        self.pending += len(values)

    def update(self, values: Sequence[Any]) -> bool:
        """Fold one step's writes; an ``Overwrite`` replaces the value (one per step)."""
        if not values:
            return False
        replacement: Any = MISSING
        for value in values:
            is_overwrite, new_value = get_overwrite(value)
            if is_overwrite:
                if replacement is not MISSING:
                    raise too_many_overwrites(self.key)
                replacement = new_value
        if replacement is not MISSING:
            self.value = self._empty() if replacement is None else _copy.copy(replacement)
            self.pending = self.snapshot_frequency  # the next checkpoint stores it whole
            return True
        base = self._empty() if self.value is MISSING else self.value
        self.value = self.reducer(base, list(values))
        self.pending += len(values)
        return True

    def snapshot_due(self) -> bool:
        """Whether the next checkpoint should store the value whole."""
        return self.pending >= self.snapshot_frequency

    def stored_whole(self) -> None:
        """The value was just stored whole: start counting writes again."""
        self.pending = 0

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING
