"""``langgraph.utils.config``: config accessors (stepgraph's ``stepgraph.config``)."""

from stepgraph.compat.mirror._internal._config import (
    RunnableConfig,
    ensure_config,
    get_config,
    get_store,
    merge_configs,
    patch_config,
    patch_configurable,
)
from stepgraph.config import get_stream_writer

__all__ = ["RunnableConfig", "ensure_config", "get_config", "get_store", "get_stream_writer",
           "merge_configs", "patch_config", "patch_configurable"]
