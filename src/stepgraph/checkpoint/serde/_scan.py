"""A msgpack walker that decodes nothing: nesting depth and array map keys of raw bytes.

Used only on the rare paths where the libraries cannot be trusted to bound the work
themselves: a nested object whose depth must be known before the (recursive) library decodes
it, and maps with array keys, which ormsgpack turns into tuples (whose hashes an attacker can
make collide) without calling back into Python. The walk is iterative, so hostile nesting
cannot exhaust the stack here either.
"""

from __future__ import annotations

__all__ = ["Scan", "scan"]

# Scalars of a fixed payload size after the type byte (ints, floats, fixext with its type byte).
_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2,
          0xD2: 4, 0xD3: 8, 0xCA: 4, 0xCB: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9,
          0xD8: 17}  # fmt: skip
# Length-prefixed payloads: (width of the length, bytes after it before the payload).
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),
          0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1)}  # fmt: skip


class Scan:
    """What ``scan`` found."""

    __slots__ = ("depth", "array_keys")

    def __init__(self, depth: int, array_keys: list[tuple[int, int]]) -> None:
        self.depth = depth
        """Deepest container nesting (a scalar alone is depth 0)."""
        self.array_keys = array_keys
        """``(start, end)`` of every map key that is an array."""


class ScanError(ValueError):
    """The bytes are not one well-formed msgpack object."""


def _container(b: int, data: bytes, pos: int) -> tuple[int, int, int]:
    """``(kind, count, header_end)`` with kind 1 array, 2 map, 0 scalar (count = byte size)."""
    if b <= 0x7F or b >= 0xE0:
        return 0, 0, pos + 1
    if b <= 0x8F:
        return 2, b & 0x0F, pos + 1
    if b <= 0x9F:
        return 1, b & 0x0F, pos + 1
    if b <= 0xBF:
        return 0, b & 0x1F, pos + 1
    fixed = _FIXED.get(b)
    if fixed is not None:
        return 0, fixed, pos + 1
    sized = _SIZED.get(b)
    if sized is not None:
        width, extra = sized
        n = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
        return 0, n + extra, pos + 1 + width
    if b in (0xDC, 0xDE):
        return (1 if b == 0xDC else 2), int.from_bytes(data[pos + 1 : pos + 3], "big"), pos + 3
    if b in (0xDD, 0xDF):
        return (1 if b == 0xDD else 2), int.from_bytes(data[pos + 1 : pos + 5], "big"), pos + 5
    raise ScanError(f"invalid msgpack byte 0x{b:02x} at {pos}")


_EXT_HEADS = {0xD4: (1, 1), 0xD5: (1, 2), 0xD6: (1, 4), 0xD7: (1, 8), 0xD8: (1, 16),
              0xC7: (2, 1), 0xC8: (3, 2), 0xC9: (5, 4)}  # fmt: skip
"""ext headers: (bytes before the type byte, width of the length or the fixed size)."""
_OBJECT_CODES = range(6)
"""Extension codes whose payload is a msgpack ``[module, name, argument, ...]`` array."""


def _ext_payload(b: int, data: bytes, pos: int) -> tuple[int, int] | None:
    """``(payload start, payload end)`` of an object extension at ``pos``, else ``None``."""
    head = _EXT_HEADS.get(b)
    if head is None:
        return None
    before, width = head
    if b >= 0xD4:
        size, type_at = width, pos + 1
    else:
        size, type_at = int.from_bytes(data[pos + 1 : pos + before], "big"), pos + before
    if type_at >= len(data) or data[type_at] not in _OBJECT_CODES:
        return None
    return type_at + 1, type_at + 1 + size


def scan(data: bytes, stop_depth: int, *, into_objects: bool = False) -> Scan:
    """Walk one msgpack object; stops early (returning that depth) past ``stop_depth``.

    ``into_objects`` also walks the payloads of object extensions (each one level deeper),
    so the depth is that of everything decoding the bytes will nest.
    """
    end = len(data)
    pos = 0
    deepest = 0
    keys: list[tuple[int, int]] = []
    # frames: [items left, is_map, key start (-1: not inside an array key), payload end]
    stack: list[list[int]] = []
    while True:
        if pos >= end:
            raise ScanError("truncated msgpack data")
        top = stack[-1] if stack else None
        is_key = top is not None and top[1] == 1 and top[0] % 2 == 0
        start = pos
        b = data[pos]
        payload = _ext_payload(b, data, pos) if into_objects else None
        if payload is not None:
            if payload[1] > end or payload[0] >= payload[1]:
                raise ScanError("truncated extension payload")
            frame, pos = [1, 0, -1, payload[1]], payload[0]
        else:
            kind, n, pos = _container(b, data, pos)
            items = 0 if kind == 0 else n if kind == 1 else 2 * n
            if kind == 0:
                pos += n
                if pos > end:
                    raise ScanError("truncated msgpack data")
            elif items > end - pos:  # every item takes at least one byte
                raise ScanError("declared length exceeds the data")
            if not items:
                if is_key and kind == 1:
                    keys.append((start, pos))
                deepest = max(deepest, len(stack) + (kind != 0))
                if _finish(stack, pos, keys):
                    if pos != end:
                        raise ScanError("trailing bytes after the msgpack object")
                    return Scan(deepest, keys)
                continue
            frame = [items, 1 if kind == 2 else 0, start if is_key and kind == 1 else -1, -1]
        stack.append(frame)
        if len(stack) > deepest:
            deepest = len(stack)
            if deepest > stop_depth:
                return Scan(deepest, keys)


def _finish(stack: list[list[int]], pos: int, keys: list[tuple[int, int]]) -> bool:
    """One item ended at ``pos``: close the containers it completes; True when all are."""
    while stack:
        frame = stack[-1]
        frame[0] -= 1
        if frame[0]:
            return False
        stack.pop()
        if frame[2] >= 0:
            keys.append((frame[2], pos))
        if frame[3] >= 0 and frame[3] != pos:
            raise ScanError("extension payload length does not match its contents")
    return True
