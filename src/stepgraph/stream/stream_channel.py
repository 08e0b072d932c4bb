"""``StreamChannel``: a single-consumer queue that a transformer pushes projection items into.

Nothing is buffered until someone subscribes (iterates the channel): a projection nobody
reads costs nothing. A consumer whose buffer is empty asks the run for one more event (the
*pump*) instead of waiting on a background producer, so the run advances at the reader's
pace. A channel with a ``name`` also forwards every push into its mux's main event log.

The cursor logic is one pure step (``_step``) shared by the sync and the async cursor.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from stepgraph.stream._mux import StreamMux

T = TypeVar("T")

_ITEM, _END, _PUMP = 0, 1, 2


class StreamChannel(Generic[T]):
    """A drainable projection. ``StreamChannel("name")`` is also forwarded to the main event
    log (method ``name`` for a native transformer's channel, ``custom:name`` otherwise)."""

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._maxlen = maxlen
        self._items: deque[tuple[int, T]] = deque()
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None
        self._subscribed = False
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: StreamMux | None = None

    # -- wiring (done by the mux) --------------------------------------------------------------
    def _bind(self, *, is_async: bool) -> None:
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound")
        self._is_async = is_async

    def _bind_mux(self, mux: StreamMux) -> None:
        self._mux = mux

    def _wire(self, fn: Callable[[T], None]) -> None:
        self._wire_fn = fn

    # -- producer ------------------------------------------------------------------------------
    def push(self, item: T) -> None:
        """Queue ``item`` for the subscriber (if any) and forward it (if wired)."""
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            stamp = self._mux._next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        self._closed = True

    def fail(self, err: BaseException) -> None:
        self._error = err
        self._closed = True

    # -- consumer ------------------------------------------------------------------------------
    def _subscribe(self, want_async: bool) -> None:
        if self._is_async is None:
            raise TypeError(
                "StreamChannel has not been bound yet. Register the transformer with a "
                "StreamMux first."
            )
        if self._is_async != want_async:
            hint = "'async for'" if self._is_async else "'for'"
            mode = "async" if self._is_async else "sync"
            raise TypeError(f"This StreamChannel is bound to {mode} mode — use {hint} instead.")
        if self._subscribed:
            fan = ".atee(n)" if want_async else ".tee(n)"
            raise RuntimeError(f"StreamChannel already has a subscriber; use {fan} for fan-out.")
        self._subscribed = True

    def _step(self, has_pump: bool) -> tuple[int, Any]:
        """What the cursor does next: yield an item, end (raising the error if failed), or
        pump the run for more."""
        if self._items:
            return _ITEM, self._items.popleft()[1]
        if self._closed:
            if self._error is not None:
                raise self._error
            return _END, None
        return (_PUMP, None) if has_pump else (_END, None)

    def _stalled(self) -> bool:
        """After a pump that produced nothing: stop unless it left items or closed us."""
        return not self._items and not self._closed

    def __iter__(self) -> Iterator[T]:
        self._subscribe(False)
        return self._cursor()

    def _cursor(self) -> Iterator[T]:
        while True:
            kind, item = self._step(self._request_more is not None)
            if kind == _ITEM:
                yield item
            elif kind == _END:
                return
            elif not self._request_more() and self._stalled():  # type: ignore[misc]
                return

    def __aiter__(self) -> AsyncIterator[T]:
        self._subscribe(True)
        return self._acursor()

    async def _acursor(self) -> AsyncIterator[T]:
        while True:
            kind, item = self._step(self._arequest_more is not None)
            if kind == _ITEM:
                yield item
            elif kind == _END:
                return
            elif not await self._arequest_more() and self._stalled():  # type: ignore[misc]
                return

    # -- fan-out -------------------------------------------------------------------------------
    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """``n`` independent sync iterators over this channel (subscribes once)."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        fan = _Fan(n, iter(self))
        return tuple(fan.branch(i) for i in range(n))

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """``n`` independent async iterators over this channel (subscribes once)."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        fan = _Fan(n, aiter(self))
        lock = asyncio.Lock()
        return tuple(fan.abranch(i, lock) for i in range(n))


class _Fan:
    """The buffers of ``tee``/``atee``: each branch pops its own, and refills every branch's
    from the source when its own is empty."""

    def __init__(self, n: int, source: Any) -> None:
        self.source = source
        self.buffers: list[deque[Any]] = [deque() for _ in range(n)]
        self.done = False
        self.error: BaseException | None = None

    def _deal(self, item: Any) -> None:
        for buf in self.buffers:
            buf.append(item)

    def branch(self, i: int) -> Iterator[Any]:
        buf = self.buffers[i]
        while True:
            if buf:
                yield buf.popleft()
                continue
            if self.done:
                return
            try:
                self._deal(next(self.source))
            except StopIteration:
                self.done = True

    async def abranch(self, i: int, lock: asyncio.Lock) -> AsyncIterator[Any]:
        buf = self.buffers[i]
        while True:
            if buf:
                yield buf.popleft()
                continue
            if self.done:
                if self.error is not None:
                    raise self.error
                return
            async with lock:
                if buf or self.done:
                    continue
                try:
                    self._deal(await self.source.__anext__())
                except StopAsyncIteration:
                    self.done = True
                except Exception as e:
                    self.error, self.done = e, True
