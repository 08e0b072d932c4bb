"""Helpers of ``stepgraph.pregel.remote.RemoteGraph``: a graph on a LangGraph-API server.

``wire`` turns configs, states and graphs into the server's JSON and back (pure, no I/O);
``events`` folds one run's SSE events into what the caller sees; ``node`` is what a
``RemoteGraph`` running as a node of a local graph takes from (and gives to) its parent.
The public class lives in ``stepgraph.pregel.remote``.
"""

from stepgraph.remote.wire import RemoteException

__all__ = ["RemoteException"]
