"""Channels: each state key's storage and the rule merging one superstep's writes into it.

Pure in-memory objects with no I/O, named and behaving like LangGraph's
(``langgraph.channels``) so ported graphs keep their semantics.
"""

from stepgraph.channels.any_value import AnyValue
from stepgraph.channels.base import BaseChannel, EmptyChannelError
from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.delta import DeltaChannel
from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.channels.last_value_after_finish import LastValueAfterFinish
from stepgraph.channels.named_barrier_value import NamedBarrierValue
from stepgraph.channels.named_barrier_value_after_finish import NamedBarrierValueAfterFinish
from stepgraph.channels.topic import Topic
from stepgraph.channels.untracked_value import UntrackedValue

__all__ = [
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EmptyChannelError",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
    "UntrackedValue",
]
