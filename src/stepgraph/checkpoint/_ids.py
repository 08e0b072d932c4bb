"""Time-sortable checkpoint ids: a UUID version 6 whose string form sorts in creation order."""

from __future__ import annotations

import secrets
import threading
import time
import uuid

__all__ = ["uuid6"]

_GREGORIAN_OFFSET = 0x01B21DD213814000
"""100-ns intervals between 1582-10-15 (the UUID epoch) and 1970-01-01."""

_lock = threading.Lock()
_last_ts = 0
_node = secrets.randbits(48) | (1 << 40)  # random node with the multicast bit set (RFC 9562)


def uuid6(node: int | None = None, clock_seq: int | None = None) -> uuid.UUID:
    """A UUIDv6: timestamp bits first, so ids made later in this process compare greater.

    Within one process ids strictly increase even when the clock does not move (the
    timestamp is bumped by one tick) or moves backwards. ``clock_seq`` (14 bits, e.g. the
    step number) and ``node`` (48 bits) fill the low bits; both default to random values.
    """
    global _last_ts
    now = time.time_ns() // 100 + _GREGORIAN_OFFSET
    with _lock:
        ts = now if now > _last_ts else _last_ts + 1
        _last_ts = ts
    if clock_seq is None:
        clock_seq = secrets.randbits(14)
    if node is None:
        node = _node
    time_high_mid = (ts >> 12) & 0xFFFF_FFFF_FFFF
    time_low = ts & 0x0FFF
    value = (
        (time_high_mid << 80)
        | (0x6 << 76)
        | (time_low << 64)
        | (0b10 << 62)
        | ((clock_seq & 0x3FFF) << 48)
        | (node & 0xFFFF_FFFF_FFFF)
    )
    return uuid.UUID(int=value)
