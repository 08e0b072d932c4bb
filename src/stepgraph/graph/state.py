"""Public path ``stepgraph.graph.state`` (as ``langgraph.graph.state``)."""

from stepgraph.graph.builder import StateGraph, StateNodeSpec
from stepgraph.graph.compile import CompiledStateGraph

__all__ = ["CompiledStateGraph", "StateGraph", "StateNodeSpec"]
