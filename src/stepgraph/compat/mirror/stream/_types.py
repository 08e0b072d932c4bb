"""``langgraph.stream._types`` (placeholders until stepgraph has v3 streaming natively)."""

from stepgraph.compat.mirror.stream._pending import ProtocolEvent, StreamTransformer

__all__ = ["ProtocolEvent", "StreamTransformer"]
