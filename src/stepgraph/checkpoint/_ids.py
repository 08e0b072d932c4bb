"""Time-sortable checkpoint ids: a UUID version 6 whose string form sorts in creation order."""

from __future__ import annotations

import base64
import binascii
import functools
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable

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


# --- stored form ------------------------------------------------------------------------
# The SQL savers store canonical UUID strings (36 characters) as 23: "~" and the 128 bits in
# 22 characters of a base64 alphabet listed in ASCII order, so stored ids sort like the UUIDs
# and every query comparing ids (latest, ``before``) works on the stored text unchanged. "~"
# sorts after hex digits, so rows of the older 36-character form sort before newer rows.
# Any other id is stored as it is, with a second "~" in front if it starts with "~".
_ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
_STANDARD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BYTES_TO_ORDERED = bytes.maketrans(_STANDARD.encode(), _ALPHABET.encode())
_TO_STANDARD = str.maketrans(_ALPHABET, _STANDARD)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_VERSION = re.compile(r"\d{12}\.[0-9a-f]{6}")


def _encode(raw: bytes, pad: bytes) -> str:
    """``raw`` in the ordered alphabet (``pad`` zero bytes in front make a whole number of
    characters; the characters they alone fill are dropped). Translated as bytes: a byte
    table is several times faster than ``str.translate``'s dict, and a new id is encoded at
    every step."""
    text = binascii.b2a_base64(pad + raw, newline=False).translate(_BYTES_TO_ORDERED)
    return text[len(pad) * 4 // 3 :].decode()


def _decode(text: str, pad: bytes) -> bytes:
    full = "-" * (len(pad) * 4 // 3) + text
    return base64.b64decode(full.translate(_TO_STANDARD))[len(pad) :]


def _stored_id(checkpoint_id: str) -> str:
    """The form an id is stored in (see above); ``loaded_id`` reverses it."""
    if _UUID.fullmatch(checkpoint_id):
        return "~" + _encode(bytes.fromhex(checkpoint_id.replace("-", "")), b"\0\0")
    if checkpoint_id.startswith("~"):
        return "~" + checkpoint_id
    return checkpoint_id


def _loaded_id(stored: str) -> str:
    """The id a stored id stands for."""
    if not stored.startswith("~"):
        return stored
    if stored.startswith("~~") or len(stored) != 23:
        return stored[1:]
    h = _decode(stored[1:], b"\0\0").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _stored_version(version: str) -> str:
    """The stored form of a channel version string: stepgraph's ``"%012d.%06x"`` versions
    become ``"="`` and 11 characters of the same order-keeping alphabet; any other version is
    kept, with a second ``"="`` in front if it starts with one."""
    if _VERSION.fullmatch(version):
        n = (int(version[:12]) << 24) | int(version[13:], 16)
        if n < 1 << 64:
            return "=" + _encode(n.to_bytes(8, "big"), b"\0")
    if version.startswith("="):
        return "=" + version
    return version


def _loaded_version(stored: str) -> str:
    """The version a stored version stands for (``stored_version`` reversed)."""
    if not stored.startswith("="):
        return stored
    if stored.startswith("==") or len(stored) != 12:
        return stored[1:]
    n = int.from_bytes(_decode(stored[1:], b"\0"), "big")
    return f"{n >> 24:012d}.{n & 0xFFFFFF:06x}"


_MEMO_MAX_LEN = 64
"""Only strings up to this length are memoized (ids and versions are ~36 characters), so the
memos stay under ~16384 * 2 * 64 characters each whatever ids a caller uses."""


def _memoized(fn: Callable[[str], str]) -> Callable[[str], str]:
    memo = functools.lru_cache(maxsize=16384)(fn)

    @functools.wraps(fn)
    def call(text: str) -> str:
        return memo(text) if len(text) <= _MEMO_MAX_LEN else fn(text)

    return call


stored_id = _memoized(_stored_id)
loaded_id = _memoized(_loaded_id)
stored_version = _memoized(_stored_version)
loaded_version = _memoized(_loaded_version)
