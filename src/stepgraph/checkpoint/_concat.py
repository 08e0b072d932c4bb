"""Join msgpack-encoded lists without decoding them: read a delta chain with one decode.

A msgpack array is a header (its length) followed by its elements, each self-contained. So
the snapshot and deltas of a list channel, when the serializer writes lists as plain msgpack
arrays, can be joined as ``header(total) + bodies`` and decoded once, which is much cheaper
than decoding hundreds of small deltas one by one. ``encodes_plain_arrays`` checks the
serializer first; anything unexpected falls back to decoding part by part.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["MSGPACK", "encodes_plain_arrays", "join_arrays"]

MSGPACK = "msgpack"


def encodes_plain_arrays(serde: Any) -> bool:
    """True when ``serde`` writes lists as bare msgpack arrays under the ``"msgpack"`` tag."""
    try:
        return serde.dumps_typed([0, "a", [1]]) == (MSGPACK, b"\x93\x00\xa1a\x91\x01") and (
            serde.loads_typed((MSGPACK, b"\x92\x00\x01")) == [0, 1]
        )
    except Exception:
        return False


def _body(data: bytes) -> tuple[int, memoryview] | None:
    view = memoryview(data)
    if not view:
        return None
    first = view[0]
    if 0x90 <= first <= 0x9F:
        return first & 0x0F, view[1:]
    if first == 0xDC and len(view) >= 3:
        return int.from_bytes(view[1:3], "big"), view[3:]
    if first == 0xDD and len(view) >= 5:
        return int.from_bytes(view[1:5], "big"), view[5:]
    return None


def _header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def join_arrays(parts: Sequence[bytes]) -> bytes | None:
    """One msgpack array holding the elements of ``parts`` in order; ``None`` if one is not an array."""
    total = 0
    bodies: list[memoryview] = []
    for data in parts:
        found = _body(data)
        if found is None:
            return None
        total += found[0]
        bodies.append(found[1])
    if total >= 1 << 32:
        return None
    return _header(total) + b"".join(bodies)
