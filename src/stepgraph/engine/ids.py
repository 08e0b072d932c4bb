"""Deterministic ids: task ids re-derived on resume, time-ordered checkpoint ids."""

from __future__ import annotations

import os
import random
import threading
from hashlib import blake2b as _blake2b
from time import time_ns as _time_ns


def task_id(*parts: str | int) -> str:
    """UUID-shaped hash of ``parts``: re-planning a checkpoint gives the same task ids.

    The digest is blake2b-128 of every part as text (``str(part)``) followed by a NUL byte
    (one update of the joined bytes: the same digest as one update per part)."""
    if len(parts) == 6:  # (a PULL task with one trigger, a PUSH task: most of them)
        a, b, c, d, e, f = parts
        text = f"{a!s}\x00{b!s}\x00{c!s}\x00{d!s}\x00{e!s}\x00{f!s}\x00"
    else:
        text = "\x00".join(map(str, parts)) + "\x00" if parts else ""
    x = _blake2b(text.encode(), digest_size=16).hexdigest()
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
        now = _time_ns() // 100 + 0x01B21DD213814000
        if now <= _last_ns:
            now = _last_ns + 1
        _last_ns = now
    # time_high (32 bits) time_mid (16) | version 6, time_low (12) | variant, clock (14) | node (48)
    high = now >> 12
    return "%08x-%04x-%04x-%04x-%012x" % (  # noqa: UP031 - one C-level format, the cheapest
        high >> 16,
        high & 0xFFFF,
        0x6000 | (now & 0x0FFF),
        0x8000 | (step & 0x3FFF),
        _rng.getrandbits(48),
    )


def path_sort_key(path: tuple[object, ...]) -> str:
    """String key ordering task paths: PULL by node name, then PUSH by index."""
    if len(path) > 3:
        return _sort_key(path)
    key = _SORT_KEYS.get(path)
    if key is None:
        key = _sort_key(path)
        if len(_SORT_KEYS) < 4096:
            _SORT_KEYS[path] = key
    return key


def _sort_key(path: tuple[object, ...]) -> str:
    return "~" + ", ".join(
        _sort_key(p)
        if isinstance(p, tuple)
        else f"{p:010d}"
        if isinstance(p, int) and not isinstance(p, bool)
        else str(p)
        for p in path
    )


_SORT_KEYS: dict[tuple[object, ...], str] = {}
"""Keys of short paths (a node's PULL path, a PUSH index), made once each."""
