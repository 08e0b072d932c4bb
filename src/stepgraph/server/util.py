"""Ids and timestamps in the shapes the LangGraph Server API uses."""

from __future__ import annotations

import os
import threading
import time
import uuid
from datetime import UTC, datetime

__all__ = ["SYSTEM_ASSISTANT_NS", "is_uuid", "now_iso", "system_assistant_id", "uuid7"]

SYSTEM_ASSISTANT_NS = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""Namespace of the system assistants' ids: ``uuid5(SYSTEM_ASSISTANT_NS, graph_id)``."""

_lock = threading.Lock()
_last = [0, 0]  # last (ms, counter) handed out, so ids from one process strictly increase


def uuid7() -> str:
    """A time-ordered UUIDv7 string (48-bit ms timestamp, 12-bit counter, 62 random bits)."""
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last[0]:
            ms, counter = _last[0], _last[1] + 1
            if counter > 0xFFF:
                ms, counter = ms + 1, 0
        else:
            counter = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last[0], _last[1] = ms, counter
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | rand
    return str(uuid.UUID(int=value))


def now_iso() -> str:
    """The current UTC time as ISO 8601 with ``+00:00``."""
    return datetime.now(UTC).isoformat()


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a string holding a UUID."""
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def system_assistant_id(graph_id: str) -> str:
    """The id of the assistant the server creates for a registered graph."""
    return str(uuid.uuid5(SYSTEM_ASSISTANT_NS, graph_id))
