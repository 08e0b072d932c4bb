"""The run stream objects of ``stream_events(version="v3")`` / ``astream_events``.

No background thread or task: reading any projection (``run.values``, ``run.messages``, the
raw events, ``run.output``) pulls the graph's next stream part through the *pump*, pushes it
through the mux and returns. ``GraphRunStream`` and ``AsyncGraphRunStream`` share what they
know about the run (``_RunState``) and differ only in how one part is pulled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any

from stepgraph.stream._convert import convert_to_protocol_event
from stepgraph.stream._mux import StreamMux
from stepgraph.stream._types import ProtocolEvent
from stepgraph.stream.interleave import interleave

if TYPE_CHECKING:
    from stepgraph.stream.stream_channel import StreamChannel


class _RunState:
    """What both run streams track: the latest own-level values (``output``), interrupts,
    whether the run is over, and the native projections as attributes."""

    def _setup(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []
        self._scope_list: list[str] = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] != "values":
            return
        params = event["params"]
        if params["namespace"] != self._scope_list:
            return
        self._latest = params["data"]
        if interrupts := params.get("interrupts", ()):
            self._interrupted = True
            self._interrupts.extend(interrupts)

    def _ingest(self, part: Any) -> ProtocolEvent:
        event = convert_to_protocol_event(part)
        self._observe_event(event)
        return event

    def _raise_error(self) -> None:
        if (err := self._mux._events._error) is not None:
            raise err


class GraphRunStream(_RunState):
    """A sync v3 run: iterate ``run.values``, ``run.messages``, ``run.subgraphs``, the run
    itself (protocol events) or read ``run.output``; ``extensions`` holds every projection.
    Each projection has a single reader (``.tee(n)`` for more). Use as a context manager to
    stop the run on early exit."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[Any]
    subgraphs: StreamChannel[SubgraphRunStream]

    def __init__(self, graph_iter: Iterator[Any] | None, mux: StreamMux, *,
                 wire_pump: bool = True) -> None:
        self._graph_iter = graph_iter
        self._setup(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Pull one part of the run into the mux; ``False`` once the run is over."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            part = next(self._graph_iter)
        except StopIteration:
            self._exhausted = True
            self._mux.close()
            return False
        except Exception as e:
            self._exhausted = True
            self._mux.fail(e)
            return False
        try:
            self._mux.push(self._ingest(part))
        except Exception as e:
            self._exhausted = True
            self._mux.fail(e)
            return False
        return True

    def _drive(self) -> None:
        while self._pump_next():
            pass
        self._raise_error()

    def abort(self) -> None:
        """Stop the run (closing the graph's iterator cancels running nodes and subgraphs)
        and close every projection. Idempotent."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        if graph_iter is not None and (close := getattr(graph_iter, "close", None)) is not None:
            try:
                close()
            except Exception:
                pass
        try:
            self._mux.close()
        except Exception:
            pass

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.abort()

    @property
    def output(self) -> dict[str, Any] | None:
        """Run to the end; the final state (raises the run's error)."""
        self._drive()
        return self._latest

    @property
    def interrupted(self) -> bool:
        """Run to the end; whether it paused on an interrupt."""
        self._drive()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        """Run to the end; the interrupts it paused on."""
        self._drive()
        return self._interrupts

    def __iter__(self) -> Iterator[ProtocolEvent]:
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """``(name, item)`` from several projections in the order their items arrived."""
        return interleave(self, names)


class AsyncGraphRunStream(_RunState):
    """Async twin of ``GraphRunStream`` (``await run.output()``, ``async for``, ``async
    with``). Concurrent readers share one pump: one of them pulls, the others wait for it."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[Any]
    subgraphs: StreamChannel[AsyncSubgraphRunStream]

    def __init__(self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *,
                 wire_pump: bool = True) -> None:
        self._graph_aiter = graph_aiter
        self._setup(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:  # another reader pulls: wait for its part
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            return await self._pull_one()
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def _pull_one(self) -> bool:
        assert self._graph_aiter is not None
        # A child task, so that abort() can cancel a pull in flight (the cancellation reaches
        # the running nodes and subgraphs).
        self._anext_task = asyncio.ensure_future(self._graph_aiter.__anext__())
        try:
            part = await self._anext_task
        except asyncio.CancelledError:
            if self._aborting:
                self._exhausted = True
                return False
            self._anext_task.cancel()
            raise
        except StopAsyncIteration:
            self._exhausted = True
            await self._mux.aclose()
            return False
        except Exception as e:
            self._exhausted = True
            await self._mux.afail(e)
            return False
        finally:
            self._anext_task = None
        try:
            await self._mux.apush(self._ingest(part))
        except Exception as e:
            self._exhausted = True
            await self._mux.afail(e)
            return False
        return True

    async def _drive(self) -> None:
        while await self._apump_next():
            pass
        self._raise_error()

    async def abort(self) -> None:
        """Stop the run (cancelling a pull in flight) and close every projection."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = True
            self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            pull = self._anext_task
            self._pump_cond.notify_all()
        if pull is not None and not pull.done():
            pull.cancel()
            try:
                await pull
            except (asyncio.CancelledError, Exception):
                pass
        if graph_aiter is not None and (aclose := getattr(graph_aiter, "aclose", None)) is not None:
            try:
                await aclose()
            except Exception:
                pass
        try:
            await self._mux.aclose()
        except Exception:
            pass

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.abort()

    async def output(self) -> dict[str, Any] | None:
        """Run to the end; the final state (raises the run's error)."""
        await self._drive()
        return self._latest

    async def interrupted(self) -> bool:
        await self._drive()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        await self._drive()
        return self._interrupts

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        return self._mux._events.__aiter__()


class _SubgraphInfo:
    """What a subgraph handle adds: where it runs and how it ended (set by
    ``SubgraphTransformer``). Its projections are fed by the parent's pump."""

    def _init_info(self, path: tuple[str, ...], graph_name: str | None,
                   trigger_call_id: str | None) -> None:
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status = "started"
        self.error: str | None = None
        self._seen_terminal = False

    def _ended(self) -> bool:
        return self._exhausted or self._seen_terminal or self._mux._events._closed  # type: ignore[attr-defined]


class SubgraphRunStream(GraphRunStream, _SubgraphInfo):
    """A subgraph of a sync v3 run (an item of ``run.subgraphs``)."""

    def __init__(self, mux: StreamMux, *, path: tuple[str, ...], graph_name: str | None = None,
                 trigger_call_id: str | None = None) -> None:
        self._parent_pump_fn: Callable[[], bool] | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self._init_info(path, graph_name, trigger_call_id)

    def _pump_next(self) -> bool:
        if self._ended() or self._parent_pump_fn is None:
            return False
        return self._parent_pump_fn()


class AsyncSubgraphRunStream(AsyncGraphRunStream, _SubgraphInfo):
    """A subgraph of an async v3 run (an item of ``run.subgraphs``)."""

    def __init__(self, mux: StreamMux, *, path: tuple[str, ...], graph_name: str | None = None,
                 trigger_call_id: str | None = None) -> None:
        self._parent_apump_fn: Callable[[], Awaitable[bool]] | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self._init_info(path, graph_name, trigger_call_id)

    async def _apump_next(self) -> bool:
        if self._ended() or self._parent_apump_fn is None:
            return False
        return await self._parent_apump_fn()
