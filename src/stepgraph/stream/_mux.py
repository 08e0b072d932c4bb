"""``StreamMux``: routes a run's protocol events through its transformers into the main log.

One mux per scope: the root run's, and one per subgraph handle (``_make_child``), each with
fresh transformers from the same factories. The sync lane (``push``/``close``/``fail``) and
the async lane (``apush``/``aclose``/``afail``) share every decision (``_admit``, ``_settle``);
they differ only in calling ``process`` or awaiting ``aprocess`` (and the other hooks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from stepgraph.stream._convert import make_event
from stepgraph.stream._types import (
    ProtocolEvent,
    StreamTransformer,
    scheduled_tasks,
    transformer_requires_async,
)
from stepgraph.stream.stream_channel import StreamChannel

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]
"""``factory(scope) -> StreamTransformer``: a transformer class is one."""


class StreamMux:
    """The transformers, projections (``extensions``) and main event log of one scope."""

    def __init__(
        self,
        transformers: list[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: list[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        self.is_async = is_async
        self.scope: tuple[str, ...] = tuple(scope)
        self._assign_seq = _assign_seq
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self._seq = 0
        self._push_seq = 0
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._projection_owners: dict[str, str] = {}
        self._transformer_by_key: dict[str, StreamTransformer] = {}
        self._factories = list(factories) if factories is not None else None
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        # Factories first (they are cloned into child scopes), then root-only instances;
        # within each group ``before_builtins`` transformers go first.
        if factories is not None:
            self._register_all(factory(self.scope) for factory in factories)
        self._register_all(transformers or ())

    # -- registration --------------------------------------------------------------------------
    def _register_all(self, transformers: Iterable[StreamTransformer]) -> None:
        built = list(transformers)
        early = [t for t in built if getattr(t, "before_builtins", False)]
        for t in early + [t for t in built if not getattr(t, "before_builtins", False)]:
            self._register(t)

    def _register(self, transformer: StreamTransformer) -> None:
        if not self.is_async and transformer_requires_async(transformer):
            raise RuntimeError(
                f"{type(transformer).__name__} requires an async run (it overrides "
                "aprocess/afinalize/afail or sets requires_async=True): use "
                "astream_events(version='v3'), not stream_events."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"StreamTransformer.init() must return a dict, got {type(projection).__name__}"
            )
        clash = sorted(set(projection) & set(self.extensions))
        if clash:
            owners = ", ".join(f"{k!r} (owned by {self._projection_owners[k]})" for k in clash)
            raise ValueError(
                f"Transformer {type(transformer).__name__} returned projection keys that "
                f"conflict with already-registered keys: {owners}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if isinstance(value, StreamChannel):
                self._adopt(value, native)
        self.extensions.update(projection)
        for key in projection:
            self._projection_owners[key] = type(transformer).__name__
            self._transformer_by_key[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt(self, channel: StreamChannel[Any], native: bool) -> None:
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        if self._pump_fn is not None:
            channel._request_more = self._pump_fn
        if self._apump_fn is not None:
            channel._arequest_more = self._apump_fn
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(lambda item, _m=method: self._forward(_m, item))

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        return self._transformer_by_key.get(key)

    def _next_push_seq(self) -> int:
        self._push_seq += 1
        return self._push_seq

    # -- pumps and child scopes ----------------------------------------------------------------
    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Make every cursor of this mux pull the run through ``fn`` when its buffer is empty."""
        self._pump_fn = fn
        for ch in (self._events, *self._channels):
            ch._request_more = fn
        for t in self._transformers:
            if (bind := getattr(t, "_bind_pump", None)) is not None:
                bind(fn)

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        """Async twin of ``bind_pump``."""
        self._apump_fn = fn
        for ch in (self._events, *self._channels):
            ch._arequest_more = fn
        for t in self._transformers:
            if (bind := getattr(t, "_bind_apump", None)) is not None:
                bind(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mux for a subgraph at ``scope``: fresh transformers from the same factories, the
        same pumps, no ``seq`` of its own (it shares the root's event objects)."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux._make_child requires a mux built with `factories=` (pre-built "
                "transformers cannot be cloned into a subgraph scope)."
            )
        child = StreamMux(factories=self._factories, is_async=self.is_async, scope=scope,
                          _assign_seq=False)
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    # -- dispatch (shared decisions) -----------------------------------------------------------
    def _admit(self, event: ProtocolEvent, keep: bool) -> None:
        """After the transformers saw ``event``: append it to the main log unless one of them
        suppressed it. The root numbers it now, so events its transformers forwarded while
        processing it come first."""
        if keep:
            self._append(event)

    def _append(self, event: ProtocolEvent) -> None:
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def _forward(self, method: str, item: Any) -> None:
        """A named channel's push, as an event of the main log (not seen by transformers)."""
        self._append(make_event(method, [], item))

    def _settle(self, err: BaseException | None) -> None:
        """Close (or fail with ``err``) the projections and the main log still open."""
        for ch in self._channels:
            if not ch._closed:
                ch.close() if err is None else ch.fail(err)
        if not self._events._closed:
            self._events.close() if err is None else self._events.fail(err)

    # -- sync lane -----------------------------------------------------------------------------
    def push(self, event: ProtocolEvent) -> None:
        keep = True
        for t in self._transformers:
            if not t.process(event):
                keep = False
        self._admit(event, keep)

    def close(self) -> None:
        first: BaseException | None = None
        for t in self._transformers:
            try:
                t.finalize()
            except BaseException as e:
                first = first or e
        self._settle(None)
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        for t in self._transformers:
            try:
                t.fail(err)
            except BaseException:
                pass
        self._settle(err)

    # -- async lane ----------------------------------------------------------------------------
    def _scheduled(self) -> list[asyncio.Task[Any]]:
        return [task for t in self._transformers for task in scheduled_tasks(t)]

    async def apush(self, event: ProtocolEvent) -> None:
        keep = True
        for t in self._transformers:
            if not await t.aprocess(event):
                keep = False
        self._admit(event, keep)

    async def aclose(self) -> None:
        pending = self._scheduled()
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for r in results:
                if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                    raise r
        first: BaseException | None = None
        for t in self._transformers:
            try:
                await t.afinalize()
            except BaseException as e:
                first = first or e
        self._settle(None)
        if first is not None:
            raise first

    async def afail(self, err: BaseException) -> None:
        pending = self._scheduled()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for t in self._transformers:
            try:
                await t.afail(err)
            except BaseException:
                pass
        self._settle(err)
