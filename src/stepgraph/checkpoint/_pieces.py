"""Content-addressed pieces: store each large list element of a msgpack value once per thread.

A chat stores the same message several times: in the ``__start__`` input, in the pending
write of the task that produced it, in the delta of the messages channel, and again in every
snapshot of that list. ``split`` walks plain msgpack bytes (without decoding them) and
replaces every array element of at least ``MIN_PIECE`` bytes, at any depth reached through
arrays and maps, by a 15-byte reference (a msgpack ``ext8`` of type ``REF_CODE`` holding a
12-byte BLAKE2b digest of the element's bytes: 96 bits, so even a thread of a billion pieces
has a chance of a collision below 10^-11). The elements become rows of a
pieces table keyed by ``(thread_id, digest)``, stored once however often they are referenced.
``join`` puts the bytes back; the result is byte-for-byte the original encoding, so the
serializer decodes it as before. A reader refuses a skeleton that repeats its pieces into
much more than its own size (a planted skeleton of many references to one large piece would
expand without bound), so ``split`` references a piece again only while the repeated bytes
of the value stay within ``REPEAT_ALLOWANCE``; later repeats stay inline. Anything the walker does not expect makes ``split`` give up
(the value is then stored whole): correctness never depends on splitting.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby, islice, repeat
from typing import Any

__all__ = ["MIN_PIECE", "REF_CODE", "REPEAT_ALLOWANCE", "encode_runs", "join", "refs", "split", "split_items"]

MIN_PIECE = 64
"""Array elements smaller than this stay inline (a reference plus a row would not pay off)."""
REF_CODE = 0x53
"""msgpack extension type of a piece reference; the serializer never writes it."""
DIGEST_SIZE = 12
_REF_HEAD = bytes((0xC7, DIGEST_SIZE, REF_CODE))
_REF_LEN = len(_REF_HEAD) + DIGEST_SIZE
_MAX_DEPTH = 6
REPEAT_ALLOWANCE = 1 << 20
"""Bytes a value's references may repeat (pieces referenced more than once), the reader's
``DecodeLimits.expansion_allowance``."""


class _Unsplittable(Exception):
    """The bytes hold something the walker does not handle: store them whole."""


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


def _header(buf: memoryview, pos: int) -> tuple[int, int, int]:
    """``(kind, count_or_length, header_end)``: kind 0 scalar/opaque span, 1 array, 2 map."""
    b = buf[pos]
    if b <= 0x7F or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
        return 0, 0, pos + 1
    if 0x80 <= b <= 0x8F:
        return 2, b & 0x0F, pos + 1
    if 0x90 <= b <= 0x9F:
        return 1, b & 0x0F, pos + 1
    if 0xA0 <= b <= 0xBF:
        return 0, b & 0x1F, pos + 1
    fixed = _FIXED.get(b)
    if fixed is not None:
        return 0, fixed, pos + 1
    sized = _SIZED.get(b)
    if sized is not None:
        width, extra = sized
        n = int.from_bytes(buf[pos + 1 : pos + 1 + width], "big")
        return 0, n + extra, pos + 1 + width
    if b in (0xDC, 0xDD):
        width = 2 if b == 0xDC else 4
        return 1, int.from_bytes(buf[pos + 1 : pos + 1 + width], "big"), pos + 1 + width
    if b in (0xDE, 0xDF):
        width = 2 if b == 0xDE else 4
        return 2, int.from_bytes(buf[pos + 1 : pos + 1 + width], "big"), pos + 1 + width
    raise _Unsplittable(f"byte 0x{b:02x}")


# Scalars of a fixed payload size after the type byte (ints, floats, fixext incl. type byte).
_FIXED = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8,
          0xCA: 4, 0xCB: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}  # fmt: skip
# Length-prefixed payloads: (length width, extra bytes after the length: ext's type byte).
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xD9: (1, 0), 0xDA: (2, 0),
          0xDB: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1)}  # fmt: skip


def _skip(buf: memoryview, pos: int) -> int:
    """The end of the object starting at ``pos``."""
    kind, n, pos = _header(buf, pos)
    if kind == 0:
        return pos + n
    for _ in range(n if kind == 1 else 2 * n):
        pos = _skip(buf, pos)
    return pos


def split(data: bytes) -> tuple[bytes, dict[bytes, bytes]] | None:
    """``(skeleton, {digest: piece})``, or ``None`` when nothing was worth splitting."""
    if len(data) < MIN_PIECE:
        return None
    buf = memoryview(data)
    cuts: list[tuple[int, int, bytes]] = []
    pieces: dict[bytes, bytes] = {}
    repeated = 0

    def element(pos: int, end: int) -> bool:
        nonlocal repeated
        if _ref_at(buf, pos, end) is not None:
            raise _Unsplittable("the value already holds a piece reference")
        if end - pos < MIN_PIECE:
            return False
        piece = bytes(buf[pos:end])
        key = _digest(piece)
        if key in pieces:
            if repeated + len(piece) > REPEAT_ALLOWANCE:
                return False  # stays inline: a reader allows only so much repetition
            repeated += len(piece)
        pieces[key] = piece
        cuts.append((pos, end, key))
        return True

    try:
        if _scan(buf, 0, 0, element) != len(buf):
            return None
    except (_Unsplittable, IndexError, RecursionError, ValueError):
        return None
    if not pieces:
        return None
    out: list[bytes | memoryview] = []
    last = 0
    for pos, end, key in cuts:
        out.append(buf[last:pos])
        out.append(_REF_HEAD + key)
        last = end
    out.append(buf[last:])
    return b"".join(out), pieces


def split_items(
    items: list[Any], pack: Callable[[Any], bytes]
) -> tuple[bytes, dict[bytes, bytes], int] | None:
    """``split`` of the msgpack array of ``items``, made from the elements' own encodings
    instead of walking the array's bytes: ``pack(item)`` must be what the serializer writes
    for the item inside a list (a msgpack array is its header followed by its elements).

    Each distinct object is packed once, however often the list references it. Returns
    ``(skeleton, pieces, bytes of the whole encoding)``: the skeleton is the array itself
    when no element is worth splitting. ``None`` when an element looks like a piece
    reference (the caller stores the value whole).
    """
    if len(items) >= 8 and _mostly_runs(items):
        return _split_runs(items, pack)  # (one step a run)
    return _split_each(items, pack)


def _split_each(
    items: list[Any], pack: Callable[[Any], bytes]
) -> tuple[bytes, dict[bytes, bytes], int] | None:
    """``split_items`` one element at a time."""
    return _split_pairs(len(items), zip(items, repeat(1)), pack)


def _split_runs(
    items: list[Any], pack: Callable[[Any], bytes]
) -> tuple[bytes, dict[bytes, bytes], int] | None:
    """``split_items`` taking each run of one object at once. Same result."""
    return _split_pairs(len(items), _runs(items), pack)


def _runs(items: list[Any]) -> Iterator[tuple[Any, int]]:
    """``(object, times in a row)`` for each run of one object in ``items``."""
    for _, run in groupby(items, id):
        same = list(run)
        yield same[0], len(same)


def _mostly_runs(items: list[Any]) -> bool:
    """Whether most neighbours in ``items`` are the same object (then a list is best
    encoded a run at a time: ``_split_runs``, ``encode_runs``)."""
    return sum(map(operator.is_, items, islice(items, 1, None))) * 2 >= len(items)


def _packed(
    memo: dict[int, tuple[bytes, bytes | None]], item: Any, pack: Callable[[Any], bytes]
) -> tuple[bytes, bytes | None] | None:
    """``(encoding, piece digest or None when it stays inline)`` of ``item``, remembered in
    ``memo``; ``None`` when its encoding looks like a piece reference (the list stays whole)."""
    data = pack(item)
    if len(data) == _REF_LEN and data.startswith(_REF_HEAD):
        return None
    hit = memo[id(item)] = (data, _digest(data) if len(data) >= MIN_PIECE else None)
    return hit


def _split_pairs(
    count: int, pairs: Iterable[tuple[Any, int]], pack: Callable[[Any], bytes]
) -> tuple[bytes, dict[bytes, bytes], int] | None:
    """``split_items`` of a list of ``count`` elements given as ``(object, times in a row)``:
    each element once, or each run of one object at once (a list of many references to a few
    objects, such as ``[item] * n`` appended again and again). Same result either way."""
    memo: dict[int, tuple[bytes, bytes | None]] = {}
    head = _array_header(count)
    out: list[bytes] = [head]
    total = len(head)
    pieces: dict[bytes, bytes] = {}
    repeated = 0
    for item, n in pairs:
        hit = memo.get(id(item))
        if hit is None:
            hit = _packed(memo, item, pack)
            if hit is None:
                return None
        data, key = hit
        size = len(data)
        if n == 1:  # (the usual element: no run)
            total += size
            if key is None:
                out.append(data)
            elif key not in pieces:
                pieces[key] = data
                out.append(_REF_HEAD + key)
            elif repeated + size > REPEAT_ALLOWANCE:  # stays inline: a reader allows only so much
                out.append(data)
            else:
                repeated += size
                out.append(_REF_HEAD + key)
            continue
        total += size * n
        if key is None:
            out += [data] * n
            continue
        refs = 0
        if key not in pieces:  # the first reference is not a repeat
            pieces[key] = data
            refs, n = 1, n - 1
        # each repeat is a reference while the repeated bytes stay within the allowance
        repeats = min(n, (REPEAT_ALLOWANCE - repeated) // size)
        repeated += repeats * size
        out += [_REF_HEAD + key] * (refs + repeats)
        out += [data] * (n - repeats)
    return b"".join(out), pieces, total


def encode_runs(items: list[Any], pack: Callable[[Any], bytes]) -> bytes | None:
    """The msgpack array of ``items`` (``pack`` as for ``split_items``) made a run of one
    object at a time, each object packed once; ``None`` unless most neighbours are the same
    object (then packing the list whole is as quick)."""
    if not _mostly_runs(items):
        return None
    memo: dict[int, bytes] = {}
    out = [_array_header(len(items))]
    for item, n in _runs(items):
        data = memo.get(id(item))
        if data is None:
            data = memo[id(item)] = pack(item)
        out += [data] * n
    return b"".join(out)


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def _scan(buf: memoryview, pos: int, depth: int, element: Callable[[int, int], bool]) -> int:
    """Walk the object at ``pos`` through arrays and maps; returns its end.

    ``element(start, end)`` is called for every array element; when it returns True the
    element is not walked into. ``split`` and ``join`` share this walk, so a reference is only
    ever looked for where ``split`` could have put one.
    """
    kind, n, start = _header(buf, pos)
    if kind == 0 or depth >= _MAX_DEPTH:
        return _skip(buf, pos)
    pos = start
    if kind == 2:
        for _ in range(n):
            pos = _skip(buf, pos)
            pos = _scan(buf, pos, depth + 1, element)
        return pos
    for _ in range(n):
        end = _skip(buf, pos)
        if not element(pos, end):
            end = _scan(buf, pos, depth + 1, element)
        pos = end
    return pos


def _ref_at(buf: memoryview, pos: int, end: int) -> bytes | None:
    if end - pos == _REF_LEN and buf[pos : pos + 3] == _REF_HEAD:
        return bytes(buf[pos + 3 : end])
    return None


_PARSED: dict[bytes, tuple[bytes, ...] | None] = {}
"""``_all_refs`` answers by skeleton bytes (the same rows are read again at every turn of a
chat); at most ``_PARSED_MAX`` entries, the oldest dropped first."""
_PARSED_MAX = 8192
_PARSED_BYTES = 4096
"""Longer skeletons are parsed at every call (a long snapshot is read rarely)."""


def _all_refs(skeleton: bytes) -> tuple[bytes, ...] | None:
    """The digests of a skeleton that is an array of references only (a list delta or
    snapshot), found without walking; ``None`` for any other skeleton."""
    if len(skeleton) > _PARSED_BYTES or type(skeleton) is not bytes:
        return _parse_refs(skeleton)
    found = _PARSED.get(skeleton, _MISSING)
    if found is _MISSING:
        found = _parse_refs(skeleton)
        if len(_PARSED) >= _PARSED_MAX:
            try:
                del _PARSED[next(iter(_PARSED))]
            except (StopIteration, KeyError, RuntimeError):  # another thread got there first
                pass
        _PARSED[skeleton] = found
    return found  # type: ignore[return-value]


_MISSING: Any = object()


def _parse_refs(skeleton: bytes) -> tuple[bytes, ...] | None:
    if not skeleton:
        return None
    first = skeleton[0]
    if 0x90 <= first <= 0x9F:
        n, start = first & 0x0F, 1
    elif first == 0xDC and len(skeleton) >= 3:
        n, start = int.from_bytes(skeleton[1:3], "big"), 3
    elif first == 0xDD and len(skeleton) >= 5:
        n, start = int.from_bytes(skeleton[1:5], "big"), 5
    else:
        return None
    end = len(skeleton)
    if end - start != n * _REF_LEN:
        return None
    if (skeleton[start:end:_REF_LEN] != _HEAD_0 * n
            or skeleton[start + 1 : end : _REF_LEN] != _HEAD_1 * n
            or skeleton[start + 2 : end : _REF_LEN] != _HEAD_2 * n):  # fmt: skip
        return None
    return tuple([skeleton[i : i + DIGEST_SIZE] for i in range(start + 3, end, _REF_LEN)])


_HEAD_0, _HEAD_1, _HEAD_2 = (_REF_HEAD[i : i + 1] for i in range(3))


def refs(skeleton: bytes) -> Sequence[bytes]:
    """The digests a skeleton references, in order."""
    fast = _all_refs(skeleton)
    if fast is not None:
        return fast
    buf = memoryview(skeleton)
    found: list[bytes] = []

    def element(pos: int, end: int) -> bool:
        key = _ref_at(buf, pos, end)
        if key is None:
            return False
        found.append(key)
        return True

    _scan(buf, 0, 0, element)
    return found


def join(skeleton: bytes, piece: Callable[[bytes], bytes | None]) -> bytes:
    """The original bytes of ``skeleton``, reading each referenced piece with ``piece``.

    Raises ``KeyError`` with the digest when ``piece`` does not know a referenced piece.
    """
    fast = _all_refs(skeleton)
    if fast is not None:
        parts = [skeleton[: len(skeleton) - len(fast) * _REF_LEN]]
        for key in fast:
            data = piece(key)
            if data is None:
                raise KeyError(key)
            parts.append(data)
        return b"".join(parts)
    buf = memoryview(skeleton)
    out: list[bytes | memoryview] = []
    last = 0

    def element(pos: int, end: int) -> bool:
        nonlocal last
        key = _ref_at(buf, pos, end)
        if key is None:
            return False
        data = piece(key)
        if data is None:
            raise KeyError(key)
        out.append(buf[last:pos])
        out.append(data)
        last = end
        return True

    _scan(buf, 0, 0, element)
    out.append(buf[last:])
    return b"".join(out)


def elements(
    data: bytes, piece: Callable[[bytes], bytes | None]
) -> tuple[list[bytes], Sequence[bytes]] | None:
    """``(encoded elements, digests referenced)`` of a msgpack array (a list blob), with
    piece references replaced by their pieces' bytes; ``None`` when ``data`` is not one array
    (the caller decodes it whole). Raises ``KeyError`` with the digest of a piece ``piece``
    does not know."""
    keys = _all_refs(data)
    if keys is not None:  # a list delta or snapshot of pieces only: no walk
        out = list(map(piece, keys))
        if None in out:
            raise KeyError(keys[out.index(None)])
        return out, keys  # type: ignore[return-value]
    buf = memoryview(data)
    found: list[bytes] = []
    try:
        kind, n, pos = _header(buf, 0)
        if kind != 1:
            return None
        out = []
        for _ in range(n):
            end = _skip(buf, pos)
            key = _ref_at(buf, pos, end)
            if key is None:
                out.append(data[pos:end])
            else:
                got = piece(key)
                if got is None:
                    raise KeyError(key)
                out.append(got)
                found.append(key)
            pos = end
    except (_Unsplittable, IndexError, ValueError, RecursionError):
        return None
    return (out, found) if pos == len(buf) else None
