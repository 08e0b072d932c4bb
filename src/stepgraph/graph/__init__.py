"""Define graphs over a shared state: ``StateGraph``, ``START``/``END``, messages helpers."""

from stepgraph.constants import END, START
from stepgraph.graph.builder import StateGraph
from stepgraph.graph.compile import CompiledStateGraph
from stepgraph.graph.message import REMOVE_ALL_MESSAGES, MessageGraph, MessagesState, add_messages

__all__ = [
    "END",
    "REMOVE_ALL_MESSAGES",
    "START",
    "CompiledStateGraph",
    "MessageGraph",
    "MessagesState",
    "StateGraph",
    "add_messages",
]
