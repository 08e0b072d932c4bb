"""``astream_events`` / ``stream_events``: a run as LangChain-style stream events (v1/v2)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from stepgraph.stream.events_v2 import INTERNAL_MODES, EventConverter, EventFilter

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel

_FILTERS = ("include_names", "include_types", "include_tags", "exclude_names", "exclude_types",
            "exclude_tags")


def _check_version(version: str) -> None:
    if version not in ("v1", "v2"):
        raise NotImplementedError(
            f"astream_events(version={version!r}) is not supported; use version='v2'."
        )


class EventsAPI:
    """Mixin of ``Pregel``: stream events for UIs that consume LangChain's event format."""

    async def astream_events(
        self: Pregel, input: Any, config: Any = None, *, version: str = "v2",  # type: ignore[misc]
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield ``on_chain_*`` events for the graph and its nodes and ``on_chat_model_*``
        events for chat models called in nodes (those need langchain-core)."""
        events = _Events(self, input, config, version, kwargs)
        for event in events.start():
            yield event
        async for part in self.astream(input, config, stream_mode=INTERNAL_MODES, subgraphs=True,
                                       _raw_parts=True, **kwargs):
            for event in events.convert(part):
                yield event
        for event in events.end():
            yield event

    def stream_events(
        self: Pregel, input: Any, config: Any = None, *, version: str = "v2",  # type: ignore[misc]
        **kwargs: Any,
    ) -> Iterator[dict[str, Any]]:
        """Sync twin of ``astream_events``."""
        events = _Events(self, input, config, version, kwargs)
        yield from events.start()
        for part in self.stream(input, config, stream_mode=INTERNAL_MODES, subgraphs=True,
                                _raw_parts=True, **kwargs):
            yield from events.convert(part)
        yield from events.end()


class _Events:
    """The filtered events of one run, shared by the sync and async twins. Takes the filter
    keyword arguments out of ``kwargs`` (the rest go to ``stream``)."""

    def __init__(self, graph: Pregel, input: Any, config: Any, version: str,
                 kwargs: dict[str, Any]) -> None:
        from stepgraph.config import ensure_config, with_run_metadata

        _check_version(version)
        self.filter = EventFilter(**{k: kwargs.pop(k) for k in _FILTERS if k in kwargs})
        metadata = with_run_metadata(ensure_config(graph.config, config))["metadata"]
        self.converter = EventConverter(graph.name, input,
                                        metadata={**metadata, "ls_integration": "langgraph"})

    def start(self) -> list[dict[str, Any]]:
        return [self.converter.start] if self.filter.allows(self.converter.start) else []

    def convert(self, part: Any) -> list[dict[str, Any]]:
        return [e for e in self.converter.convert(part) if self.filter.allows(e)]

    def end(self) -> list[dict[str, Any]]:
        return [e for e in self.converter.end(None) if self.filter.allows(e)]
