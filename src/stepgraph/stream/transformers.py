"""The built-in stream transformers (``stepgraph.stream.transformers``)."""

from stepgraph.stream.transformers_data import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    TasksTransformer,
    UpdatesTransformer,
    ValuesTransformer,
)
from stepgraph.stream.transformers_lifecycle import (
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    _TasksLifecycleBase,
)
from stepgraph.stream.transformers_messages import MessagesTransformer
from stepgraph.stream.transformers_subgraph import SubgraphTransformer
from stepgraph.stream.transformers_tools import ToolCallStream, ToolCallTransformer

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "ToolCallStream",
    "ToolCallTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
    "_TasksLifecycleBase",
]
