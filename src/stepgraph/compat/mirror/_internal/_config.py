"""``langgraph._internal._config``: config helpers (over ``stepgraph.config``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stepgraph.config import RunnableConfig, ensure_config, get_config, get_store

__all__ = ["ensure_config", "get_config", "get_store", "merge_configs", "patch_config",
           "patch_configurable"]


def patch_configurable(config: RunnableConfig | None, patch: Mapping[str, Any]) -> RunnableConfig:
    """A copy of ``config`` whose ``configurable`` has ``patch``'s keys set."""
    config = dict(config or {})
    config["configurable"] = {**(config.get("configurable") or {}), **patch}
    return config  # type: ignore[return-value]


def patch_config(config: RunnableConfig | None, **changes: Any) -> RunnableConfig:
    """A copy of ``config`` with the top-level keys in ``changes`` replaced (``None`` ones
    left out), as langchain-core's ``patch_config`` does for the keys LangGraph passes."""
    out = dict(config or {})
    for key, value in changes.items():
        if value is not None:
            out[key] = value
    return out  # type: ignore[return-value]


def merge_configs(*configs: RunnableConfig | None) -> RunnableConfig:
    """The configs merged left to right (``configurable`` and ``metadata`` key by key, tags
    concatenated, anything else replaced)."""
    out: dict[str, Any] = {}
    for config in configs:
        if not config:
            continue
        for key, value in config.items():
            if key in ("configurable", "metadata") and isinstance(value, Mapping):
                out[key] = {**(out.get(key) or {}), **value}
            elif key == "tags":
                out[key] = [*(out.get(key) or []), *value]
            else:
                out[key] = value
    return out  # type: ignore[return-value]
