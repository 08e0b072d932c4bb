"""``astream_events`` / ``stream_events``: a run as LangChain-style stream events (v1/v2)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from stepgraph.config import ensure_config, with_run_metadata
from stepgraph.stream.events_v2 import INTERNAL_MODES, EventConverter, EventFilter

if TYPE_CHECKING:
    import asyncio

    from stepgraph.pregel.main import Pregel

_FILTERS = ("include_names", "include_types", "include_tags", "exclude_names", "exclude_types",
            "exclude_tags")


def _check_version(version: str) -> None:
    if version not in ("v1", "v2"):
        raise NotImplementedError(
            f"astream_events(version={version!r}) is not supported; use 'v1', 'v2' or 'v3'."
        )


class EventsAPI:
    """Mixin of ``Pregel``: stream events for UIs that consume LangChain's event format."""

    def astream_events(
        self: Pregel, input: Any, config: Any = None, *, version: str = "v2",  # type: ignore[misc]
        transformers: Any = None, **kwargs: Any,
    ) -> Any:
        """Yield ``on_chain_*`` events for the graph and its nodes and ``on_chat_model_*``
        events for chat models called in nodes (those need langchain-core).

        ``version="v3"``: an awaitable of an ``AsyncGraphRunStream`` (``docs/v3-streaming.md``);
        ``transformers`` adds stream transformers to it."""
        if version == "v3":
            # lazy: asyncio and the v3 muxers
            from stepgraph.pregel.events_v3 import astream_v3

            return astream_v3(self, input, config, transformers, kwargs)
        return self._astream_events(input, config, version, kwargs)

    async def _astream_events(
        self: Pregel, input: Any, config: Any, version: str, kwargs: dict[str, Any],  # type: ignore[misc]
    ) -> AsyncIterator[dict[str, Any]]:
        events = _Events(self, input, config, version, kwargs)
        parts = self._astream_parts(
            input, config, {**kwargs, "stream_mode": INTERNAL_MODES, "subgraphs": True},
            "astream_events")
        # As in LangGraph the run goes on while the consumer holds an event; a consumer
        # that stops (or is cancelled) cancels it, and waits for its last save.
        import asyncio  # here, not at the top: ``import stepgraph`` stays free of asyncio

        queue: asyncio.Queue[Any] = asyncio.Queue()
        producer = asyncio.ensure_future(_produce(parts, queue))
        try:
            for event in events.start():
                yield event
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                if isinstance(item, _Failed):
                    raise item.error
                for event in events.convert(item):
                    yield event
        finally:
            if not producer.done():
                producer.cancel()
            with contextlib.suppress(BaseException):
                await producer
        for event in events.end():
            yield event

    def stream_events(
        self: Pregel, input: Any, config: Any = None, *, version: str = "v2",  # type: ignore[misc]
        transformers: Any = None, **kwargs: Any,
    ) -> Any:
        """Sync twin of ``astream_events`` (``version="v3"``: a ``GraphRunStream``)."""
        if version == "v3":
            # lazy: asyncio and the v3 muxers
            from stepgraph.pregel.events_v3 import stream_v3

            return stream_v3(self, input, config, transformers, kwargs)
        return self._stream_events(input, config, version, kwargs)

    def _stream_events(
        self: Pregel, input: Any, config: Any, version: str, kwargs: dict[str, Any],  # type: ignore[misc]
    ) -> Iterator[dict[str, Any]]:
        events = _Events(self, input, config, version, kwargs)
        yield from events.start()
        for part in self._stream_parts(
                input, config, {**kwargs, "stream_mode": INTERNAL_MODES, "subgraphs": True},
                "stream_events"):
            yield from events.convert(part)
        yield from events.end()


_DONE = object()


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def _produce(parts: Any, queue: asyncio.Queue[Any]) -> None:
    """Run the graph (``parts``, its raw stream) into ``queue``, then ``_DONE`` or the error."""
    import asyncio

    try:
        async with aclosing(parts):
            async for part in parts:
                queue.put_nowait(part)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001 - handed to the consumer
        queue.put_nowait(_Failed(exc))
        return
    queue.put_nowait(_DONE)


class _Events:
    """The filtered events of one run, shared by the sync and async twins. Takes the filter
    keyword arguments out of ``kwargs`` (the rest go to ``stream``)."""

    def __init__(self, graph: Pregel, input: Any, config: Any, version: str,
                 kwargs: dict[str, Any]) -> None:
        _check_version(version)
        self.filter = EventFilter(**{k: kwargs.pop(k) for k in _FILTERS if k in kwargs})
        metadata = with_run_metadata(ensure_config(graph.config, config))["metadata"]
        # the run streams its own modes; ``stream_mode="values"`` makes the graph's chunks values
        mode = kwargs.pop("stream_mode", None)
        run_id = (config or {}).get("run_id")
        self.converter = EventConverter(graph.name, input, run_id,
                                        "values" if mode == "values" else "updates",
                                        metadata={**metadata, "ls_integration": "langgraph"})

    def start(self) -> list[dict[str, Any]]:
        return [self.converter.start] if self.filter.allows(self.converter.start) else []

    def convert(self, part: Any) -> list[dict[str, Any]]:
        return [e for e in self.converter.convert(part) if self.filter.allows(e)]

    def end(self) -> list[dict[str, Any]]:
        return [e for e in self.converter.end(None) if self.filter.allows(e)]
