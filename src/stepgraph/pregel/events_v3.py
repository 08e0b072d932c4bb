"""``stream_events(version="v3")`` / ``astream_events(version="v3")`` of a ``Pregel``.

Builds the root ``StreamMux`` from the built-in transformers, the graph's compile-time
``stream_transformers`` and the call's ``transformers=``, asks the graph for exactly the
stream modes they need (``version="v2"`` parts, subgraphs included, chat models reporting
protocol events) and wraps the run's iterator in a run stream. The sync and async entry
points share everything but the iterator and the run-stream class.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph.config import ensure_config
from stepgraph.stream._mux import StreamMux
from stepgraph.stream._types import StreamTransformer
from stepgraph.stream.messages import V3_KEY
from stepgraph.stream.run_stream import AsyncGraphRunStream, GraphRunStream
from stepgraph.stream.transformers import (
    LifecycleTransformer,
    MessagesTransformer,
    SubgraphTransformer,
    ValuesTransformer,
)

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel

BUILTINS = (ValuesTransformer, MessagesTransformer, LifecycleTransformer, SubgraphTransformer)
OWNED_KWARGS = ("stream_mode", "subgraphs")
"""``stream`` arguments a v3 run decides itself (refused when given)."""


def reject_owned_kwargs(kwargs: dict[str, Any]) -> None:
    given = [k for k in OWNED_KWARGS if k in kwargs]
    if given:
        raise TypeError(
            f"stream_events(version='v3') / astream_events(version='v3') do not accept "
            f"{', '.join(given)}: v3 sets them (the stream modes are those its transformers "
            "need, subgraphs are always streamed to reach the subgraph projections)."
        )


def transformer_factories(specs: Sequence[Callable[..., Any]] | None) -> list[Callable[..., Any]]:
    """Check transformer specs: each is ``factory(scope) -> StreamTransformer`` (a class is
    one); an instance is refused, as it cannot be cloned into subgraph scopes."""
    out: list[Callable[..., Any]] = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"pre-built instance {type(spec).__name__}. Pass the transformer class or a "
                "factory like `lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"{type(spec).__name__}."
            )
        out.append(spec)
    return out


def required_modes(mux: StreamMux) -> list[str]:
    modes: dict[str, None] = {}
    for t in mux._transformers:
        modes.update(dict.fromkeys(getattr(t, "required_stream_modes", ())))
    return list(modes)


def _plan(graph: Pregel, config: Any, transformers: Any, kwargs: dict[str, Any],
          is_async: bool) -> tuple[StreamMux, Any, dict[str, Any]]:
    """The mux, the run's config and the ``stream`` arguments of a v3 run."""
    reject_owned_kwargs(kwargs)
    factories = [*BUILTINS, *transformer_factories(getattr(graph, "stream_transformers", ())),
                 *transformer_factories(transformers)]
    # Own-level events of a graph reach its stream with the namespace ``()`` in stepgraph
    # (also when it runs inside another graph's node), so the root scope is always ``()``.
    mux = StreamMux(factories=factories, scope=(), is_async=is_async)
    config = ensure_config(config)
    config["configurable"] = {**config["configurable"], V3_KEY: uuid.uuid4().hex}
    stream_kwargs = {**kwargs, "stream_mode": required_modes(mux), "subgraphs": True,
                     "version": "v2"}
    return mux, config, stream_kwargs


def stream_v3(graph: Pregel, input: Any, config: Any, transformers: Any,
              kwargs: dict[str, Any]) -> GraphRunStream:
    mux, config, stream_kwargs = _plan(graph, config, transformers, kwargs, False)
    return GraphRunStream(iter(graph.stream(input, config, **stream_kwargs)), mux)


async def astream_v3(graph: Pregel, input: Any, config: Any, transformers: Any,
                     kwargs: dict[str, Any]) -> AsyncGraphRunStream:
    mux, config, stream_kwargs = _plan(graph, config, transformers, kwargs, True)
    return AsyncGraphRunStream(graph.astream(input, config, **stream_kwargs).__aiter__(), mux)
