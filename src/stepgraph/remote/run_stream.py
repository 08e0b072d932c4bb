"""``RemoteGraph.stream_events(version="v3")``: the SDK's v3 thread stream as a run stream.

``langgraph_sdk``'s ``client.threads.stream(...)`` speaks the server's v3 thread protocol
(``docs/protocol/v3-thread-streaming.md``) and decodes its channels; these adapters give it
the surface of a local ``GraphRunStream`` (``values``, ``messages``, ``subgraphs``,
``tool_calls``, ``extensions``, ``output``, ``abort``, the raw events). Entering the adapter
(``with`` / ``async with``) opens the stream and starts the run. Unlike a local run,
``interrupted``/``interrupts`` read the current state without waiting for the run to end.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import Any

from stepgraph.types import Command

_log = logging.getLogger(__name__)


def _translate_command_input(input: Any) -> Any:
    """The wire ``input`` of a v3 run: a ``Command(resume=...)`` is its resume value (the
    server wraps it as the resume of the pending interrupt); ``goto``/``update`` cannot be
    sent on this path."""
    if isinstance(input, Command):
        if input.goto or input.update:
            raise NotImplementedError(
                "RemoteGraph v3 streaming takes `Command(resume=...)` only: `goto` / `update` "
                "have no equivalent in the v3 `run.start` command."
            )
        return input.resume
    return input


class _ChannelProjection:
    """A wire channel the SDK has no typed projection for (``updates``, ``checkpoints``,
    ``tasks``, ``custom``): each event's data, as the local transformer pushes it."""

    def __init__(self, sdk: Any, channel: str) -> None:
        self._sdk = sdk
        self._channel = channel

    def __iter__(self) -> Iterator[Any]:
        from langgraph_sdk.stream.decoders import DataDecoder

        decoder = DataDecoder(self._channel)
        for event in self._sdk.subscribe([self._channel]):
            yield from decoder.feed(event)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[Any]:
        from langgraph_sdk.stream.decoders import DataDecoder

        decoder = DataDecoder(self._channel)
        async for event in self._sdk.subscribe([self._channel]):
            for item in decoder.feed(event):
                yield item


class _ProjectionRegistry(Mapping[str, Any]):
    """``run.extensions`` of a remote run: the SDK's typed projections, decoded plain
    channels, and any other name as a custom channel of the SDK (``custom:<name>``).
    ``lifecycle`` and ``debug`` are not listed (the raw events carry lifecycle)."""

    _TYPED = ("values", "messages", "tool_calls", "subgraphs")
    _DECODED = ("updates", "checkpoints", "tasks", "custom")
    _NATIVE = _TYPED + _DECODED

    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def __getitem__(self, name: str) -> Any:
        if name in self._TYPED:
            return getattr(self._sdk, name)
        if name in self._DECODED:
            return _ChannelProjection(self._sdk, name)
        return self._sdk.extensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._NATIVE)

    def __len__(self) -> int:
        return len(self._NATIVE)


class _RemoteRunBase:
    """What both adapters share: the start arguments, the projections and the state."""

    def __init__(self, *, client: Any, sdk_thread: Any, input: Any, config: Any,
                 metadata: dict[str, Any] | None) -> None:
        self._client = client
        self._sdk = sdk_thread
        self._start_kwargs: dict[str, Any] = {
            "input": _translate_command_input(input), "config": config, "metadata": metadata,
        }
        self._run_id: str | None = None
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} already closed")

    @property
    def values(self) -> Any:
        return self._sdk.values

    @property
    def messages(self) -> Any:
        return self._sdk.messages

    @property
    def subgraphs(self) -> Any:
        return self._sdk.subgraphs

    @property
    def tool_calls(self) -> Any:
        """Tool executions (the ``tools`` channel), not the tool calls inside messages."""
        return self._sdk.tool_calls

    @property
    def extensions(self) -> Mapping[str, Any]:
        return _ProjectionRegistry(self._sdk)

    def _start_abort(self) -> bool:
        """Mark the stream closed; ``False`` when it already was (abort is idempotent)."""
        if self._closed:
            return False
        self._closed = True
        return True


class _RemoteGraphRunStream(_RemoteRunBase):
    """A remote v3 run, sync (``with rg.stream_events(..., version="v3") as run``)."""

    def __init__(self, *, sync_client: Any, sdk_thread: Any, input: Any, config: Any,
                 metadata: dict[str, Any] | None) -> None:
        super().__init__(client=sync_client, sdk_thread=sdk_thread, input=input, config=config,
                         metadata=metadata)
        self._events_iter: Iterator[Any] | None = None

    def __enter__(self) -> _RemoteGraphRunStream:
        self._check_open()
        self._sdk.__enter__()
        try:
            result = self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            self._sdk.__exit__(*sys.exc_info())
            raise
        self._run_id = result["run_id"]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self._closed:
            self._closed = True
            self._sdk.__exit__(exc_type, exc, tb)

    @property
    def output(self) -> Any:
        return self._sdk.output

    @property
    def interrupted(self) -> bool:
        return self._sdk.interrupted

    @property
    def interrupts(self) -> list[Any]:
        return list(self._sdk.interrupts)

    def abort(self) -> None:
        """Cancel the run (if started) and close the stream."""
        if not self._start_abort():
            return
        if self._run_id is not None:
            try:
                self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                _log.debug("abort: cancelling the remote run failed", exc_info=True)
        try:
            self._sdk.close()
        except Exception:
            _log.debug("abort: closing the thread stream failed", exc_info=True)

    def __iter__(self) -> Iterator[Any]:
        if self._events_iter is None:
            self._events_iter = iter(self._sdk.events)
        return self._events_iter

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        yield from self._sdk.interleave_projections(list(names))


class _AsyncRemoteGraphRunStream(_RemoteRunBase):
    """A remote v3 run, async (``async with await rg.astream_events(..., version="v3")``)."""

    def __init__(self, *, client: Any, sdk_thread: Any, input: Any, config: Any,
                 metadata: dict[str, Any] | None) -> None:
        super().__init__(client=client, sdk_thread=sdk_thread, input=input, config=config,
                         metadata=metadata)
        self._events_aiter: AsyncIterator[Any] | None = None

    async def __aenter__(self) -> _AsyncRemoteGraphRunStream:
        self._check_open()
        await self._sdk.__aenter__()
        try:
            result = await self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            await self._sdk.__aexit__(*sys.exc_info())
            raise
        self._run_id = result["run_id"]
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if not self._closed:
            self._closed = True
            await self._sdk.__aexit__(exc_type, exc, tb)

    async def output(self) -> Any:
        """The final state, once the remote run ended."""
        return await self._sdk.output

    async def interrupted(self) -> bool:
        return self._sdk.interrupted

    async def interrupts(self) -> list[Any]:
        return list(self._sdk.interrupts)

    async def abort(self) -> None:
        if not self._start_abort():
            return
        if self._run_id is not None:
            try:
                await self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                _log.debug("abort: cancelling the remote run failed", exc_info=True)
        try:
            await self._sdk.close()
        except Exception:
            _log.debug("abort: closing the thread stream failed", exc_info=True)

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._events_aiter is None:
            self._events_aiter = self._sdk.events.__aiter__()
        return self._events_aiter


V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})
"""The extra keyword arguments a remote v3 run takes."""


def reject_v3_unsupported(*, control: Any, transformers: Any, interrupt_before: Any,
                          interrupt_after: Any, extra_kwargs: Mapping[str, Any]) -> None:
    """``NotImplementedError`` for what a remote v3 run cannot do (the server decides its
    transformers, breakpoints and drain)."""
    for name, value in (("control", control), ("transformers", transformers),
                        ("interrupt_before", interrupt_before),
                        ("interrupt_after", interrupt_after)):
        if value:
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version='v3') does not support `{name}=`."
            )
    unknown = sorted(set(extra_kwargs) - V3_SUPPORTED_KWARGS)
    if unknown:
        raise NotImplementedError(
            f"RemoteGraph.stream_events(version='v3') does not support the following kwargs: "
            f"{unknown!r}. Supported: {sorted(V3_SUPPORTED_KWARGS)!r}."
        )


def start_args(graph: Any, config: Any) -> tuple[str | None, dict[str, Any]]:
    """(thread id, wire config) of a remote v3 run."""
    from stepgraph.config import ensure_config
    from stepgraph.remote.wire import thread_id_of, wire_config

    merged = ensure_config(graph.config, config)
    return thread_id_of(merged), wire_config(merged)
