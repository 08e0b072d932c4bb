"""The channel contract: one state key's storage and its merge rule for a superstep."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, Literal, Self, TypeAlias, TypeVar

from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError

Value = TypeVar("Value")
Update = TypeVar("Update")
Checkpoint = TypeVar("Checkpoint")

__all__ = ["BaseChannel", "EmptyChannelError", "IdleKind"]

IdleKind: TypeAlias = Literal["steady", "volatile", "finish", "unknown"]
"""What a channel does in a step that wrote nothing to it (``BaseChannel.idle_kind``)."""


class BaseChannel(Generic[Value, Update, Checkpoint], ABC):
    """Holds one value and decides how a step's writes change it.

    Channels are pure in-memory objects: no I/O, no locks. The engine calls, per superstep:
    ``consume()`` on the channels that triggered a task, ``update(writes)`` on every channel
    (an empty list for channels nobody wrote), and ``finish()`` when the graph would
    otherwise stop. A channel's version is bumped only when one of these returns ``True``.
    """

    __slots__ = ("key", "typ")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "idle_kind" not in cls.__dict__:
            # a subclass that does not state its idle behaviour makes no promise: its
            # parent's (say LastValue's "steady") may not hold for its own update()
            cls.idle_kind = BaseChannel.idle_kind  # type: ignore[method-assign]

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key

    def idle_kind(self) -> IdleKind:
        """What ``update([])`` / ``finish()`` do in a step that wrote nothing here, so the
        engine visits only the channels that can change on their own:

        * ``"steady"``: nothing (the value stays until written);
        * ``"volatile"``: ``update([])`` may change it (an ephemeral value clears);
        * ``"finish"``: only ``finish()``, when the run would stop, may change it;
        * ``"unknown"`` (the default, and for any subclass that does not define this method
          itself): either may, so both are called.
        """
        return "unknown"

    def __repr__(self) -> str:
        value = self.get() if self.is_available() else MISSING
        return f"{type(self).__name__}(key={self.key!r}, value={value!r})"

    @property
    @abstractmethod
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the value ``get()`` returns."""

    @property
    @abstractmethod
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write ``update()`` accepts."""

    def copy(self) -> Self:
        """An independent copy with the same value (default: a checkpoint round trip)."""
        return self.from_checkpoint(self.checkpoint())

    def checkpoint(self) -> Checkpoint | Any:
        """A serializable snapshot of the value, or ``MISSING`` when there is none."""
        try:
            return self.get()
        except EmptyChannelError:
            return MISSING

    @abstractmethod
    def from_checkpoint(self, checkpoint: Checkpoint | Any) -> Self:
        """A new channel of the same kind holding ``checkpoint`` (``MISSING``: empty)."""

    @abstractmethod
    def get(self) -> Value:
        """The current value; raises ``EmptyChannelError`` when there is none."""

    def is_available(self) -> bool:
        """True when ``get()`` would return a value."""
        try:
            self.get()
        except EmptyChannelError:
            return False
        return True

    @abstractmethod
    def update(self, values: Sequence[Update]) -> bool:
        """Apply one step's writes (in deterministic task order); True if the value changed.

        Raises ``InvalidUpdateError`` when the writes break the channel's rule.
        """

    def consume(self) -> bool:
        """Called after a task triggered by this channel ran; True if that changed it."""
        return False

    def finish(self) -> bool:
        """Called when the run would end; True if that made the channel change."""
        return False
