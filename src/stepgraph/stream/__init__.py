"""Streaming: the sink and output shaping of ``stream()`` (``sink.py``, ``output.py``), and
the v3 event streaming of ``stream_events(version="v3")``: run streams, ``StreamChannel``,
``StreamTransformer`` and the built-in transformers (``docs/v3-streaming.md``).

The v3 names load on first use, so ``import stepgraph`` (which needs ``sink.py``) stays lean.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_HOMES = {
    "ProtocolEvent": "_types",
    "StreamTransformer": "_types",
    "AsyncGraphRunStream": "run_stream",
    "AsyncSubgraphRunStream": "run_stream",
    "GraphRunStream": "run_stream",
    "SubgraphRunStream": "run_stream",
    "StreamChannel": "stream_channel",
    **dict.fromkeys(
        ("CheckpointsTransformer", "CustomTransformer", "DebugTransformer", "LifecyclePayload",
         "LifecycleTransformer", "MessagesTransformer", "SubgraphStatus", "SubgraphTransformer",
         "TasksTransformer", "UpdatesTransformer", "ValuesTransformer"),
        "transformers",
    ),
}

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'stepgraph.stream' has no attribute {name!r}")
    value = getattr(import_module(f"stepgraph.stream.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


if TYPE_CHECKING:
    from stepgraph.stream._types import ProtocolEvent, StreamTransformer
    from stepgraph.stream.run_stream import (
        AsyncGraphRunStream,
        AsyncSubgraphRunStream,
        GraphRunStream,
        SubgraphRunStream,
    )
    from stepgraph.stream.stream_channel import StreamChannel
    from stepgraph.stream.transformers import (
        CheckpointsTransformer,
        CustomTransformer,
        DebugTransformer,
        LifecyclePayload,
        LifecycleTransformer,
        MessagesTransformer,
        SubgraphStatus,
        SubgraphTransformer,
        TasksTransformer,
        UpdatesTransformer,
        ValuesTransformer,
    )
