"""``langgraph.stream._mux`` (placeholders until stepgraph has v3 streaming natively)."""

from stepgraph.compat.mirror.stream._pending import StreamMux, TransformerFactory

__all__ = ["StreamMux", "TransformerFactory"]
