"""Deprecated home of the run types: they live in ``stepgraph.types`` (importing warns)."""

from __future__ import annotations

from stepgraph.types import (
    All,
    CachePolicy,
    PregelTask,
    RetryPolicy,
    StateSnapshot,
    StateUpdate,
    StreamMode,
    StreamWriter,
    default_retry_on,
)
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

__all__ = [
    "All",
    "CachePolicy",
    "PregelTask",
    "RetryPolicy",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "default_retry_on",
]

deprecated_since(
    LangGraphDeprecatedSinceV10,
    "Importing from langgraph.pregel.types is deprecated. "
    "Please use 'from langgraph.types import ...' instead.",
)
