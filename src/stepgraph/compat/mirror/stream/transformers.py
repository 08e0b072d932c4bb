"""``langgraph.stream.transformers`` (placeholders until stepgraph has v3 streaming natively)."""

from stepgraph.compat.mirror.stream._pending import (
    StreamTransformer,
    SubgraphStatus,
    ToolCallTransformer,
    _TasksLifecycleBase,
)

__all__ = ["StreamTransformer", "SubgraphStatus", "ToolCallTransformer", "_TasksLifecycleBase"]
