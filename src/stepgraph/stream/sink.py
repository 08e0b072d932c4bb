"""``StreamSink``: where a run's stream parts go until the caller's iterator takes them.

Parts are appended from any thread (node threads write ``custom`` chunks) and taken by
one consumer. A sync consumer waits on a ``threading.Event``; an async one on an
``asyncio.Event`` set through the loop's ``call_soon_threadsafe``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

StreamPart = tuple[tuple[str, ...], str, Any]
"""``(namespace, mode, payload)``."""


class StreamSink:
    """A thread-safe queue of stream parts filtered by the requested ``modes``."""

    __slots__ = ("modes", "parts", "_event", "_aevent", "_loop", "subgraphs", "_owner", "base")

    def __init__(
        self, modes: frozenset[str], *, subgraphs: bool = False, base: tuple[str, ...] = ()
    ) -> None:
        self.modes = modes
        self.subgraphs = subgraphs
        self.base = base
        """The namespace of the graph whose caller reads this sink (shown as ``()``)."""
        self.parts: deque[StreamPart] = deque()
        self._event: threading.Event | None = None
        self._aevent: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._owner: int | None = None

    def emit(self, ns: tuple[str, ...], mode: str, payload: Any) -> None:
        """Queue one part (dropped when ``mode`` was not requested)."""
        if mode not in self.modes:
            return
        base = self.base
        if base and ns[: len(base)] == base:
            ns = ns[len(base):]
        if ns and not self.subgraphs:
            return
        self.parts.append((ns, mode, payload))
        self._notify()

    def _notify(self) -> None:
        if self._event is not None:
            self._event.set()
        elif self._aevent is not None:
            loop = self._loop
            assert loop is not None
            if threading.get_ident() == self._owner:
                self._aevent.set()
            else:
                loop.call_soon_threadsafe(self._aevent.set)

    # -- consumer side ----------------------------------------------------------------------
    def sync_waiter(self) -> threading.Event:
        """Make the sink wake a sync consumer; returns the event to wait on (made on the
        first call: a run whose steps all run inline never needs one)."""
        event = self._event
        if event is None:
            event = self._event = threading.Event()
        return event

    def async_waiter(self) -> asyncio.Event:
        """Make the sink wake an async consumer on the running loop."""
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._owner = threading.get_ident()
        self._aevent = asyncio.Event()
        return self._aevent

    def wake(self) -> None:
        """Wake the consumer without a part (a task finished)."""
        self._notify()

    def drain(self) -> list[StreamPart]:
        """Take every queued part, oldest first."""
        parts = self.parts
        out = []
        while parts:
            out.append(parts.popleft())
        return out


class ForwardingSink(StreamSink):
    """A child graph's sink: parts go to the parent's stream (which streams subgraphs) and,
    for the modes the child's own caller asked for, to that caller (namespace made relative;
    the child's subgraphs' parts only when that caller streams subgraphs).
    """

    __slots__ = ("target", "local", "local_subgraphs")

    def __init__(self, target: StreamSink, local: frozenset[str], base: tuple[str, ...],
                 local_subgraphs: bool = False) -> None:
        super().__init__(local | target.modes, subgraphs=True, base=base)
        self.target = target
        self.local = local
        self.local_subgraphs = local_subgraphs
        """The child's caller streams its subgraphs too (``subgraphs=True``)."""

    def emit(self, ns: tuple[str, ...], mode: str, payload: Any) -> None:
        if mode in self.target.modes:
            self.target.emit(ns, mode, payload)
        if mode in self.local:
            rel = ns[len(self.base):] if ns[: len(self.base)] == self.base else ns
            if not rel or self.local_subgraphs:
                self.parts.append((rel, mode, payload))
                self._notify()


EmitFn = Callable[[tuple[str, ...], str, Any], None]
