"""``langgraph.stream.run_stream`` (placeholders until stepgraph has v3 streaming natively)."""

from stepgraph.compat.mirror.stream._pending import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)

__all__ = ["AsyncGraphRunStream", "AsyncSubgraphRunStream", "GraphRunStream", "SubgraphRunStream"]
