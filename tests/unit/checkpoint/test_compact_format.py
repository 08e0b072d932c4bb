"""The SQL savers' compact row format: pieces, packed/diffed rows, stored ids and versions."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stepgraph.checkpoint import _packing, _pieces
from stepgraph.checkpoint._ids import loaded_id, stored_id, stored_version, uuid6
from stepgraph.checkpoint._stored_forms import long_path as _long_path
from stepgraph.checkpoint._stored_forms import short_path as _short_path
from stepgraph.checkpoint.base import next_string_version
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

SERDE = JsonPlusSerializer()

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=120)
    | st.binary(max_size=90) | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(values)
def test_split_then_join_gives_the_same_bytes(value: Any) -> None:
    """Whatever is split, joining the pieces back restores the encoding byte for byte."""
    typ, data = SERDE.dumps_typed(value)
    split = _pieces.split(data)
    if split is None:
        return
    skeleton, pieces = split
    assert len(skeleton) < len(data)
    assert set(_pieces.refs(skeleton)) == set(pieces)
    assert _pieces.join(skeleton, pieces.get) == data
    assert SERDE.loads_typed((typ, _pieces.join(skeleton, pieces.get))) == SERDE.loads_typed(
        (typ, data)
    )


def test_one_message_is_one_piece_wherever_it_appears() -> None:
    """A message in an input dict, a write and a list gives the same piece."""
    message = {"role": "user", "id": "m1", "content": "hello " * 20}
    digests = []
    for value in ({"messages": [message]}, [message], [{"role": "ai", "content": "x"}, message]):
        split = _pieces.split(SERDE.dumps_typed(value)[1])
        assert split is not None
        digests.append(set(split[1]))
    assert digests[0] == digests[1] and digests[1] <= digests[2]


def test_join_names_a_missing_piece() -> None:
    skeleton, pieces = _pieces.split(SERDE.dumps_typed(["y" * 100])[1]) or (b"", {})
    try:
        _pieces.join(skeleton, lambda _: None)
    except KeyError as missing:
        assert missing.args[0] in pieces
    else:
        raise AssertionError("join must raise for a missing piece")


def _checkpoint(step: int, **extra: Any) -> dict[str, Any]:
    v = next_string_version(step)
    return {
        "v": 4, "id": str(uuid6()), "ts": "2026-11-30T12:00:00.123456+00:00",
        "channel_versions": {"messages": v, "__start__": next_string_version(step - 1), "n": 3},
        "versions_seen": {"agent": {"messages": v}, "__input__": {}, "odd": {"x": 1.5}},
        "updated_channels": ["messages"], **extra,
    }  # fmt: skip


def test_pack_unpack_restores_the_checkpoint_and_diffs_patch_exactly() -> None:
    """Packed rows restore every key (raw versions, extras, metadata); diff + patch is exact."""
    first = _checkpoint(1, pending_sends=[1, 2])
    second = _checkpoint(2)
    second["ts"] = "2026-11-30T12:00:01+00:00"
    second["updated_channels"] = ["zz-not-a-channel"]
    md1, md2 = {"source": "input", "step": -1, "parents": {}}, {"source": "loop", "step": 0}
    p1 = _packing.pack(first, {"__start__": b"\x01"}, md1)
    p2 = _packing.pack(second, {}, md2, p1["n"])
    for packed, cp, md, inline in ((p1, first, md1, {"__start__": b"\x01"}), (p2, second, md2, {})):
        got, got_inline, got_md = _packing.unpack(packed, cp["id"])
        assert got == cp and got_inline == inline and got_md == md
    patched = _packing.patch(p1, _packing.diff(p1, p2))
    assert patched == p2
    assert len(SERDE.dumps_typed(_packing.diff(p1, p2))[1]) < len(SERDE.dumps_typed(p2)[1])


def test_stored_ids_and_versions_keep_order_and_round_trip() -> None:
    ids = [str(uuid6()) for _ in range(50)]
    odd = ["1", "abc", "~", "~x", "~~y", ""]
    for i in ids + odd:
        assert loaded_id(stored_id(i)) == i
    assert sorted(stored_id(i) for i in ids) == [stored_id(i) for i in sorted(ids)]
    assert all(len(stored_id(i)) == 23 for i in ids)
    versions, v = [], None
    for _ in range(300):
        v = next_string_version(v)
        versions.append(v)
    assert sorted(map(stored_version, versions)) == [stored_version(x) for x in versions]
    assert stored_version("=x") == "==x" and stored_version("7") == "7"


def test_task_paths_are_stored_short_and_restored() -> None:
    for path in ["", "~__pregel_pull, agent", "~__pregel_push, 0, False", "\x01odd", "abc"]:
        assert _long_path(_short_path(path)) == path
    assert len(_short_path("~__pregel_pull, agent")) == len("agent") + 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_stored_pieces_round_trip(raw: bytes) -> None:
    from stepgraph.checkpoint._squeeze import pack_piece, unpack_piece

    assert unpack_piece(pack_piece(raw)) == raw
    assert len(pack_piece(raw)) <= len(raw) + 1


def test_small_and_large_pieces_read_with_the_full_window_either_way() -> None:
    """Small pieces are deflated with a 2 KiB window, larger ones with the full one; both
    read with the full-window inflater of the format, and pieces stored before (full window
    at any size) still read."""
    import zlib

    from stepgraph.checkpoint._squeeze import _DICTIONARY_V1, _SMALL, pack_piece, unpack_piece

    words = [b"content", b"kwargs", b"metadata", b"weather", b"answer", b"tool", b"call"]
    text = b" ".join(words[i * i % 7] + str(i).encode() for i in range(2000))
    for size in (60, 400, _SMALL, _SMALL + 1, 5000):
        raw = text[:size]
        stored = pack_piece(raw)
        assert stored[0] == 1  # DEFLATE_V1
        inflate = zlib.decompressobj(-15, _DICTIONARY_V1)
        assert inflate.decompress(stored[1:]) + inflate.flush() == raw
        deflate = zlib.compressobj(
            6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_V1
        )
        before = b"\x01" + deflate.compress(raw) + deflate.flush()
        assert unpack_piece(before, 1 << 20) == raw


def test_a_message_piece_is_stored_compressed() -> None:
    """The preset dictionary lets deflate shorten even a short message to about half."""
    from stepgraph.checkpoint._squeeze import pack_piece

    messages = __import__("pytest").importorskip("langchain_core.messages")
    reply = messages.AIMessage(content="a short answer about the weather today", id="a1")
    raw = SERDE.dumps_typed(reply)[1]
    assert len(pack_piece(raw)) < 0.6 * len(raw)


def test_row_diffs_predict_the_step_and_store_the_time_as_an_offset() -> None:
    """A child row one step on, a few microseconds later, diffs to almost nothing; any other
    change (step jump, clock going back, no step, raw timestamp) still patches exactly."""
    cp = _checkpoint(1)
    parent = _packing.pack(cp, {}, {"source": "loop", "step": 4})
    child = _packing.pack(cp, {}, {"source": "loop", "step": 5}, parent["n"])
    child["ts"] = parent["ts"] + 250
    small = _packing.row_diff(parent, child)
    assert set(small) == {"ts"} and small["ts"][1] == 250
    assert _packing.row_patch(parent, small) == child
    for md, ts in (({"step": 9}, parent["ts"] - 7), ({"source": "update"}, parent["ts"])):
        other = {**child, "md": md, "ts": ts}
        assert _packing.row_patch(parent, _packing.row_diff(parent, other)) == other
    raw = {**child, "ts": "not-a-time"}
    assert _packing.row_patch(parent, _packing.row_diff(parent, raw)) == raw


_maps = st.dictionaries(
    st.integers(0, 6) | st.sampled_from(["a", "b", "source", "step"]),
    st.integers(0, 3) | st.text(max_size=3)
    | st.dictionaries(st.integers(0, 4), st.integers(0, 2), max_size=4),
    max_size=7,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_maps, _maps)
def test_diff_then_patch_is_exact(old: dict[Any, Any], new: dict[Any, Any]) -> None:
    """Any pair of maps (int and str keys, nested, shared values grouped) patches exactly."""
    assert _packing.patch(old, _packing.diff(old, new)) == new
    assert _packing.row_patch(old, _packing.row_diff(old, new)) == new


def test_split_lists_are_snapshot_once_deltas_outweigh_twice_the_last_snapshot() -> None:
    """The SQL codec writes a new snapshot of a list once its deltas outweigh twice the last
    one (the plain codec waits for six times): its delta chains, walked at every read, stay
    short while a snapshot of a split list costs only its references."""
    from stepgraph.checkpoint._codec import SaverCodec
    from stepgraph.checkpoint._compact import SNAPSHOT_RATIO, CompactCodec

    assert CompactCodec(SERDE).snapshot_ratio == SNAPSHOT_RATIO == 2.0
    assert CompactCodec(SERDE, snapshot_ratio=6.0).snapshot_ratio == 6.0
    assert SaverCodec(SERDE).snapshot_ratio == 6.0
    codec = CompactCodec(SERDE)
    items: list[Any] = []
    bases: list[str | None] = []
    for step in range(1, 60):
        items = [*items, {"role": "user", "content": f"message {step} " * 8, "id": str(step)}]
        version = next_string_version(None if step == 1 else f"{step - 1:012d}.000000")
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        checkpoint = {"v": 4, "id": str(uuid6(clock_seq=step)), "ts": "", "versions_seen": {},
                      "channel_versions": {"m": version}, "channel_values": {"m": items}}  # fmt: skip
        plan = codec.plan_put(config, checkpoint, {}, {"m": version})  # type: ignore[arg-type]
        plan.commit()
        bases.append(plan.blob_rows[0][6])
    snapshots = [i + 1 for i, base in enumerate(bases) if base is None]
    assert len(snapshots) >= 4  # (with 6x: 3 in these 59 steps)
    for before, after in zip(snapshots, snapshots[1:], strict=False):
        assert after - before <= max(2 * before, 3) + 1  # elements are about the same size


def test_timestamps_pack_to_micros_only_when_they_format_back_exactly() -> None:
    """A UTC ISO time packs as microseconds when unpacking writes the same string, whichever
    way it was checked (the canonical shape or a round trip); any other string stays raw."""
    from datetime import UTC, datetime, timedelta, timezone

    now = datetime.now(UTC)
    packed = [
        now.replace(microsecond=123456).isoformat(),  # what checkpoints carry
        now.replace(microsecond=0).isoformat(),  # no fraction written
        "0999-01-02T03:04:05.000001+00:00",
    ]
    raw = [
        now.replace(microsecond=0).isoformat().replace("+00:00", ".000000+00:00"),
        now.replace(microsecond=5).isoformat().replace("+00:00", "Z"),
        now.astimezone(timezone(timedelta(hours=2))).isoformat(),
        now.replace(microsecond=7).isoformat()[:-6],  # naive
        "2026-13-01T00:00:00.000001+00:00",  # not a date
    ]
    for ts in packed + raw:
        row = _packing.pack({"v": 4, "id": "x", "ts": ts}, {}, {})
        assert ("ts" in row) == (ts in packed), ts
        assert _packing.unpack(row, "x")[0]["ts"] == ts


def test_a_row_shares_its_parents_name_table_until_it_adds_a_name() -> None:
    cp = {"v": 4, "id": "x", "ts": "t", "channel_versions": {"a": "000000000001.000001"},
          "versions_seen": {}}  # fmt: skip
    parent = _packing.pack(cp, {}, {})
    names = parent["n"]
    same = _packing.pack(cp, {"a": b"\x01"}, {}, names)
    assert same["n"] is names  # nothing added: the parent's (never changed) list
    wider = {**cp, "channel_versions": {**cp["channel_versions"], "b": "000000000002.000002"},
             "versions_seen": {"node": {"a": "000000000001.000001"}}}  # fmt: skip
    child = _packing.pack(wider, {"c": b"\x02"}, {}, names)
    assert names == ["a"] and parent["n"] == ["a"]  # the parent's table is left as it was
    assert child["n"] == ["a", "b", "node", "c"]
    assert _packing.unpack(child, "x")[0]["channel_versions"] == wider["channel_versions"]
    assert _packing.unpack(child, "x")[1] == {"c": b"\x02"}
