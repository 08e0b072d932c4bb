"""``_squeeze.pack_piece`` copies a compressor primed with the dictionary: the stored bytes are
those of a compressor made for the piece alone, and copies never share state."""

from __future__ import annotations

import random
import zlib

from stepgraph.checkpoint import _squeeze


def _fresh(raw: bytes) -> bytes:
    small = len(raw) <= _squeeze._SMALL
    deflate = zlib.compressobj(6, zlib.DEFLATED, -11 if small else -15, 4 if small else 8,
                               zlib.Z_DEFAULT_STRATEGY, _squeeze._DICTIONARY_V1)  # fmt: skip
    return deflate.compress(raw) + deflate.flush()


def test_pieces_deflate_as_with_a_fresh_compressor() -> None:
    rng = random.Random(3)
    words = [b"content", b"tool_call_id", b"message", b"id", b"value", b"of", b"the", b"AIMessage"]
    # small pieces (the 2 KiB window) and larger ones (the full window)
    samples = [b" ".join(rng.choice(words) for _ in range(n)) for n in (20, 90, 160, 900)]
    assert min(map(len, samples)) < _squeeze._SMALL < max(map(len, samples))
    for raw in samples * 2:  # (again: a used copy leaves the primed compressor as it was)
        stored = _squeeze.pack_piece(raw)
        assert stored[0] == _squeeze.DEFLATE_V1
        assert stored[1:] == _fresh(raw)
        assert _squeeze.unpack_piece(stored) == raw
