"""LangGraph's module path of ``ToolCallStream`` (``stepgraph/stream/transformers_tools.py``)."""

from stepgraph.stream.transformers_tools import ToolCallStream

__all__ = ["ToolCallStream"]
