"""``langgraph.stream.stream_channel`` (placeholder until stepgraph has v3 streaming natively)."""

from stepgraph.compat.mirror.stream._pending import StreamChannel

__all__ = ["StreamChannel"]
