"""stepgraph: a fast, lean, LangGraph-compatible runtime for stateful agent graphs.

Import what you need from the public modules, as in LangGraph::

    from stepgraph.graph import StateGraph, START, END
    from stepgraph.types import Send, Command, interrupt
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
