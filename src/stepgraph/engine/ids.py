"""Deterministic ids: task ids re-derived on resume, time-ordered checkpoint ids."""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time


def task_id(*parts: str | int) -> str:
    """UUID-shaped hash of ``parts``: re-planning a checkpoint gives the same task ids."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(str(part).encode())
        h.update(b"\x00")
    x = h.hexdigest()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


_last_ns = 0
_lock = threading.Lock()
_rng = random.Random(os.urandom(16))
"""Random low bits of checkpoint ids (no system call per id); reseeded in forked children."""
os.register_at_fork(after_in_child=lambda: _rng.seed(os.urandom(16)))


def checkpoint_id(step: int = 0) -> str:
    """A UUIDv6-shaped id whose string order is creation order (time first, then ``step``)."""
    global _last_ns
    with _lock:
        now = time.time_ns() // 100 + 0x01B21DD213814000
        if now <= _last_ns:
            now = _last_ns + 1
        _last_ns = now
    time_high = (now >> 28) & 0xFFFFFFFF
    time_mid = (now >> 12) & 0xFFFF
    time_low = now & 0x0FFF
    clock = step & 0x3FFF
    node = _rng.getrandbits(48)
    return (
        f"{time_high:08x}-{time_mid:04x}-6{time_low:03x}-"
        f"{0x8000 | clock:04x}-{node:012x}"
    )


def path_sort_key(path: tuple[object, ...]) -> str:
    """String key ordering task paths: PULL by node name, then PUSH by index."""
    return "~" + ", ".join(
        path_sort_key(p) if isinstance(p, tuple) else f"{p:010d}" if isinstance(p, int) and not isinstance(p, bool) else str(p)
        for p in path
    )
