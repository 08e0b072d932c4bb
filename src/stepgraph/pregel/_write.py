"""LangGraph's ``pregel._write`` import path for the low-level write helpers."""

from stepgraph.engine.node import PASSTHROUGH, ChannelWrite, ChannelWriteEntry

__all__ = ["PASSTHROUGH", "ChannelWrite", "ChannelWriteEntry"]
