"""``langgraph.utils.runnable``: LangGraph's old home of ``RunnableCallable``."""

from stepgraph.compat.mirror._internal._runnable import (
    RunnableCallable,
    RunnableLike,
    coerce_to_runnable,
)

__all__ = ["RunnableCallable", "RunnableLike", "coerce_to_runnable"]
