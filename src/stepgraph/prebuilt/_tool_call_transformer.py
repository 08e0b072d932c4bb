"""LangGraph's module path of ``ToolCallTransformer`` (``stepgraph/stream/transformers_tools.py``)."""

from stepgraph.stream.transformers_tools import ToolCallTransformer

__all__ = ["ToolCallTransformer"]
