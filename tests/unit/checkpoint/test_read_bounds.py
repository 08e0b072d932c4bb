"""Bounds of the savers' read paths: inflating pieces, repeating them, looping chains."""

from __future__ import annotations

import zlib

import ormsgpack
import pytest

from stepgraph.checkpoint import _pieces
from stepgraph.checkpoint._codec import EMPTY, SaverCodec
from stepgraph.checkpoint._compact import CompactCodec
from stepgraph.checkpoint._packing import _mask, _unmask
from stepgraph.checkpoint._squeeze import MAX_RATIO, PieceTooLarge, pack_piece, unpack_piece
from stepgraph.checkpoint.base import SaverError
from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError
from stepgraph.checkpoint.serde._limits import DecodeLimits


def test_unpack_piece_stops_at_its_limit() -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = b"\x01" + deflate.compress(b"\x00" * (8 << 20)) + deflate.flush()
    with pytest.raises(PieceTooLarge):
        unpack_piece(bomb, 1 << 20)
    assert len(unpack_piece(bomb, 8 << 20)) == 8 << 20
    with pytest.raises(ValueError, match="corrupt deflate"):
        unpack_piece(b"\x01\xff\xff\xff", 100)


def test_pack_piece_never_writes_beyond_the_read_ratio() -> None:
    for raw in (b"=" * 1_000_000, ormsgpack.packb("x" * 5000), bytes(range(256)) * 50):
        stored = pack_piece(raw)
        assert len(raw) <= MAX_RATIO * len(stored)
        assert unpack_piece(stored, MAX_RATIO * len(stored)) == raw


def test_fetched_pieces_share_one_budget() -> None:
    codec = CompactCodec(JsonPlusSerializer(limits=DecodeLimits(expansion_allowance=1000)))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = b"\x01" + deflate.compress(b"\xc0" * (4 << 20)) + deflate.flush()
    with pytest.raises(SerializationError) as info:
        codec.fetched_pieces([(b"d" * 12, bomb)])
    assert info.value.code == "SG406" and "max_expansion" in str(info.value)
    fine = pack_piece(ormsgpack.packb("y" * 300))
    assert codec.fetched_pieces([(b"e" * 12, fine)])[b"e" * 12] == ormsgpack.packb("y" * 300)


def test_split_keeps_repeats_beyond_the_allowance_inline() -> None:
    big = ormsgpack.packb(["z" * 300_000] * 10)
    skeleton, pieces = _pieces.split(big)
    assert len(pieces) == 1
    assert len(_pieces.refs(skeleton)) == 1 + _pieces.REPEAT_ALLOWANCE // 300_000
    assert _pieces.join(skeleton, pieces.get) == big
    codec = SaverCodec(JsonPlusSerializer())
    assert codec.loads(("msgpack/p", skeleton), pieces.get) == ["z" * 300_000] * 10


def test_repeated_references_beyond_the_bound_are_refused() -> None:
    codec = SaverCodec(JsonPlusSerializer())
    piece = ormsgpack.packb("q" * 200_000)
    ref = bytes((0xC7, 12, _pieces.REF_CODE)) + b"k" * 12
    skeleton = b"\xdc" + (1000).to_bytes(2, "big") + ref * 1000
    with pytest.raises(SerializationError) as info:
        codec.loads(("msgpack/p", skeleton), {b"k" * 12: piece}.get)
    assert info.value.code == "SG406"


def test_a_looping_delta_chain_is_sg414() -> None:
    codec = SaverCodec(JsonPlusSerializer())
    rows = {
        ("t", "", "c", "2"): ("msgpack", ormsgpack.packb([2]), "1"),
        ("t", "", "c", "1"): ("msgpack", ormsgpack.packb([1]), "2"),
    }
    with pytest.raises(SaverError) as info:
        codec._resolve(rows.get, ("t", "", "c", "2"))
    assert info.value.code == "SG414"
    assert codec._resolve({("t", "", "c", "1"): (EMPTY, b"", None)}.get, ("t", "", "c", "1")) \
        is not None


def test_decoding_errors_of_a_row_are_coded() -> None:
    codec = SaverCodec(JsonPlusSerializer())
    row = ("t", "", "1", None, "msgpack", ormsgpack.packb([1, 2]), "msgpack", ormsgpack.packb({}))
    with pytest.raises(SerializationError) as info:
        codec.load_checkpoint(row)  # a list where a checkpoint map belongs
    assert info.value.code == "SG403" and info.value.hint


def test_unmask_is_the_inverse_of_mask_and_linear() -> None:
    names = sorted(f"c{i}" for i in range(5000))
    updated = names[::7]
    mask = _mask(updated, dict.fromkeys(names, 1))
    assert mask is not None and _unmask(mask, names) == updated
    assert _unmask(b"\xff" * 10, ["a", "b"]) == ["a", "b"]
