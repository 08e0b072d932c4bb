"""Limits on what one request may carry: body bytes, JSON nesting, id lengths, numbers.

``HTTP_MAX_REQUEST_BODY_BYTES`` is the variable LangGraph's server reads for its body limit;
stepgraph reads the same one (from the environment or the config's ``env``), with a smaller
default (10 MiB instead of 300 MiB). ``STEPGRAPH_MAX_JSON_DEPTH`` sets how deeply a request's
JSON may nest (default 64). ``ServerSettings.max_body_bytes`` / ``max_json_depth``, when set,
win over both.

These bound what a client sends; the run machinery's memory budgets are a different thing,
``runtime.limits.RuntimeLimits`` (``ServerSettings.limits``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepgraph.server.settings import ServerSettings

__all__ = [
    "BODY_BYTES_ENV",
    "DEFAULT_BODY_BYTES",
    "DEFAULT_JSON_DEPTH",
    "JSON_DEPTH_ENV",
    "MAX_ID_LENGTH",
    "MAX_KEY_LENGTH",
    "MAX_LABEL_LENGTH",
    "MAX_LABELS",
    "MAX_NS_LENGTH",
    "MAX_OFFSET",
    "MAX_PAGE",
    "MAX_SECONDS",
    "MAX_TTL_MINUTES",
    "RequestLimits",
]

BODY_BYTES_ENV = "HTTP_MAX_REQUEST_BODY_BYTES"
JSON_DEPTH_ENV = "STEPGRAPH_MAX_JSON_DEPTH"
DEFAULT_BODY_BYTES = 10 * 1024 * 1024
DEFAULT_JSON_DEPTH = 64
MAX_JSON_DEPTH = 200
"""Above this the JSON encoders themselves give up (orjson stops at 254 levels)."""

MAX_ID_LENGTH = 256
"""Thread, assistant, run and checkpoint ids, graph ids, node names."""
MAX_NS_LENGTH = 4096
"""A ``checkpoint_ns`` (``node:task_id|node:task_id...``)."""
MAX_KEY_LENGTH = 1024
"""A store key."""
MAX_LABEL_LENGTH = 256
MAX_LABELS = 64
"""A store namespace: at most ``MAX_LABELS`` labels of at most ``MAX_LABEL_LENGTH`` characters."""
MAX_PAGE = 10_000
"""The largest ``limit`` of any listing."""
MAX_OFFSET = 2**31 - 1
MAX_SECONDS = 366 * 24 * 3600
"""The longest ``after_seconds`` delay (a year)."""
MAX_TTL_MINUTES = 100 * 366 * 24 * 60
"""The longest store ``ttl`` (a century, in minutes)."""


class RequestLimitError(ValueError):
    """A limit is configured with a value that is not a positive integer in range."""


def _read(name: str, explicit: int | None, default: int, lo: int, hi: int | None) -> int:
    if explicit is not None:
        value, source = explicit, f"ServerSettings.{name}"
    else:
        env = BODY_BYTES_ENV if name == "max_body_bytes" else JSON_DEPTH_ENV
        raw = os.environ.get(env)
        if raw is None or not raw.strip():
            return default
        source = env
        try:
            value = int(raw.strip())
        except ValueError:
            raise RequestLimitError(f"{env}={raw!r} is not an integer.") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        raise RequestLimitError(f"{source} must be an integer {bound}, got {value!r}.")
    return value


@dataclass(frozen=True)
class RequestLimits:
    """The resolved limits of one server."""

    max_body_bytes: int = DEFAULT_BODY_BYTES
    max_json_depth: int = DEFAULT_JSON_DEPTH

    @classmethod
    def resolve(cls, settings: ServerSettings | None = None) -> RequestLimits:
        """Settings first, then the environment, then the defaults (``RequestLimitError`` when bad)."""
        body = getattr(settings, "max_body_bytes", None)
        depth = getattr(settings, "max_json_depth", None)
        return cls(_read("max_body_bytes", body, DEFAULT_BODY_BYTES, 1, None),
                   _read("max_json_depth", depth, DEFAULT_JSON_DEPTH, 2, MAX_JSON_DEPTH))
