"""Low-level graph runtime: ``Pregel`` and ``NodeBuilder``."""

from stepgraph.engine.node import ChannelWriteEntry, NodeBuilder, PregelNode
from stepgraph.pregel.main import Pregel

__all__ = ["ChannelWriteEntry", "NodeBuilder", "Pregel", "PregelNode"]
