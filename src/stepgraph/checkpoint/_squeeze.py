"""Compression of stored pieces: raw deflate with a fixed preset dictionary.

A piece is usually one chat message. Its msgpack encoding carries the same field names and
class paths every time (``additional_kwargs``, ``response_metadata``,
``langchain_core.messages.ai``...), which deflate alone cannot shorten in a few hundred
bytes. A preset dictionary of those fragments lets it: a typical message shrinks to about
half. Stored bytes start with a format byte: ``RAW`` (the piece as is, when compressing does
not pay) or ``DEFLATE_V1`` (raw deflate with ``_DICTIONARY_V1``). The dictionary is part of
the storage format: it never changes; a new one gets a new format byte.

Reading inflates at most a given number of bytes (``unpack_piece(stored, limit)``), so a
deflate bomb planted in the table (deflate reaches about 1000:1) cannot make a small row
expand into gigabytes; ``pack_piece`` stores a piece raw when it would compress better than
``MAX_RATIO``, so every piece it writes reads back within that ratio.
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["MAX_RATIO", "PieceTooLarge", "pack_piece", "unpack_piece"]

RAW, DEFLATE_V1 = 0, 1
_MIN = 48
"""Pieces shorter than this are stored raw."""
MAX_RATIO = 64
"""Pieces are never stored deflated beyond this ratio (``DecodeLimits.max_expansion``)."""


def _str(text: str) -> bytes:
    """``text`` as a msgpack str (so dictionary fragments match encoded bytes exactly)."""
    data = text.encode()
    n = len(data)
    if n < 32:
        return bytes((0xA0 | n,)) + data
    return bytes((0xD9, n)) + data


def _fields(*parts: str | bytes) -> bytes:
    return b"".join(_str(p) if isinstance(p, str) else p for p in parts)


_EMPTY_MAP, _EMPTY_LIST, _NIL = b"\x80", b"\x90", b"\xc0"
_COMMON = _fields("additional_kwargs", _EMPTY_MAP, "response_metadata", _EMPTY_MAP, "type")
_TAIL = _fields("name", _NIL, "id")
# Fragments in the order the serializer writes messages; later ones are matched cheapest.
_DICTIONARY_V1 = b"".join((
    _fields("tool_call_id", "function", "arguments", "args", "type", "tool_call", "role",
            "system", "tool", "assistant", "user", "content", "text", "id"),
    _fields("langchain_core.messages.tool", "ToolMessage", "content"), _COMMON,
    _fields("tool"), _TAIL, _fields("tool_call_id", "artifact", _NIL, "status", "success"),
    _fields("langchain_core.messages.system", "SystemMessage", "content"), _COMMON,
    _fields("system"), _TAIL,
    _fields("input_tokens", "output_tokens", "total_tokens", "model_name", "finish_reason",
            "stop"),
    _fields("langchain_core.messages.ai", "AIMessage", "content"), _COMMON, _fields("ai"),
    _TAIL, _fields("tool_calls", _EMPTY_LIST, "invalid_tool_calls", _EMPTY_LIST,
                   "usage_metadata", _NIL, "model_construct", "content", "id"),
    _fields("langchain_core.messages.human", "HumanMessage", "content"), _COMMON,
    _fields("human"), _TAIL, _fields("model_construct", "content", "id"),
))  # fmt: skip


_SMALL = 2048 - len(_DICTIONARY_V1)
"""Pieces up to this size fit, with the dictionary, in a 2 KiB window: they are deflated
with that window and a smaller hash table, which makes setting up the compressor (most of
the cost of a message-sized piece) about half as dear. A reader inflates with the full
window, which reads a stream made with any smaller one: the format stays ``DEFLATE_V1``."""


def _primed(small: bool) -> Any:
    """A compressor with the dictionary already loaded, to ``copy()`` for each piece (the
    copy skips hashing the dictionary again; its output is the same)."""
    return zlib.compressobj(
        6,
        zlib.DEFLATED,
        -11 if small else -15,
        4 if small else 8,
        zlib.Z_DEFAULT_STRATEGY,
        _DICTIONARY_V1,
    )


_PRIMED_SMALL = _primed(True)
_PRIMED_LARGE = _primed(False)
"""(Never used directly, only copied: copies are independent, so threads may share these.)"""


def pack_piece(raw: bytes) -> bytes:
    """The stored form of a piece."""
    if len(raw) >= _MIN:
        deflate = (_PRIMED_SMALL if len(raw) <= _SMALL else _PRIMED_LARGE).copy()
        packed = deflate.compress(raw) + deflate.flush()
        if len(packed) + 1 < len(raw) <= MAX_RATIO * (len(packed) + 1):
            return bytes((DEFLATE_V1,)) + packed
    return bytes((RAW,)) + raw


class PieceTooLarge(ValueError):
    """A stored piece inflates beyond the limit it was read with."""


def unpack_piece(stored: bytes, limit: int | None = None) -> bytes:
    """The piece a stored form holds, of at most ``limit`` bytes (``PieceTooLarge`` beyond);
    ``ValueError`` for an unknown format or corrupt deflate data."""
    kind = stored[0] if stored else -1
    if kind == RAW:
        return bytes(stored[1:])
    if kind == DEFLATE_V1:
        inflate = zlib.decompressobj(-15, _DICTIONARY_V1)
        try:
            if limit is None:
                return inflate.decompress(stored[1:]) + inflate.flush()
            out = inflate.decompress(stored[1:], limit + 1)
            if len(out) > limit or inflate.unconsumed_tail:
                raise PieceTooLarge(f"inflates beyond {limit} bytes")
            out += inflate.flush()
        except zlib.error as exc:
            raise ValueError(f"corrupt deflate data: {exc}") from None
        if len(out) > limit:
            raise PieceTooLarge(f"inflates beyond {limit} bytes")
        return out
    raise ValueError(f"unknown piece format {kind}")
