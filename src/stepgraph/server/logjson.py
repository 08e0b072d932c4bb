"""Server logging: plain text (the default) or one JSON object per line.

``stepgraph serve --log-format json`` (or LangGraph's ``LOG_JSON=true`` environment variable)
writes each record as ``{"timestamp", "level", "logger", "message"}`` plus ``exc_info`` for
an exception and any ``extra=`` fields the call passed, so a log collector can index them;
uvicorn's own records go through the same handler.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = ["JsonFormatter", "configure_logging", "log_format_from_env"]

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}
TEXT_FORMAT = "%(levelname)s:     %(message)s"


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        if record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def log_format_from_env() -> str:
    """``"json"`` when ``LOG_JSON`` is true (as LangGraph's server reads it), else ``"text"``."""
    return "json" if os.environ.get("LOG_JSON", "").strip().lower() in ("1", "true", "yes", "on") else "text"


def configure_logging(level: str, fmt: str) -> None:
    """Set up the root logger for the server (``fmt``: ``"text"`` or ``"json"``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    if fmt == "json":
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            logger = logging.getLogger(name)
            logger.handlers.clear()
            logger.propagate = True
