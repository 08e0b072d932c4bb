"""SaverCodec: how channel values become blob rows (list deltas) and read back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stepgraph.checkpoint._codec import EMPTY, SaverCodec
from stepgraph.checkpoint.base import SaverError, empty_checkpoint, next_string_version
from stepgraph.checkpoint.serde.base import SerializationError
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

CONFIG = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


class JsonSerde:
    """A non-msgpack serializer: the codec must fall back to decoding part by part."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return "json", json.dumps(obj, default=str).encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return json.loads(data[1])


@pytest.fixture(params=["jsonplus", "json"])
def codec(request: pytest.FixtureRequest) -> SaverCodec:
    return SaverCodec(JsonPlusSerializer() if request.param == "jsonplus" else JsonSerde())


class Store:
    """Puts values through a codec the way a saver does and keeps the rows."""

    def __init__(self, codec: SaverCodec) -> None:
        self.codec, self.blobs, self.versions = codec, {}, {}

    def put(self, commit: bool = True, **values: Any) -> dict[str, tuple]:
        cp = empty_checkpoint()
        new = {k: next_string_version(self.versions.get(k)) for k in values}
        self.versions.update(new)
        cp["channel_values"] = {k: v for k, v in values.items() if v is not None}
        plan = self.codec.plan_put(CONFIG, cp, {}, new)
        rows = {row[2]: row for row in plan.blob_rows}
        for row in plan.blob_rows:
            self.blobs[row[:4]] = row[4:7]
        if commit:
            plan.commit()
        return rows

    def read(self, channel: str, version: str | None = None) -> Any:
        key = ("t", "", channel, version or self.versions[channel])
        return self.codec._resolve(self.blobs.get, key)


def test_appends_become_deltas_on_the_previous_version(codec: SaverCodec) -> None:
    """A list that extends the last stored one is stored as its suffix, based on that version."""
    store = Store(codec)
    first = store.put(m=[{"a": 1}])["m"]
    second = store.put(m=[{"a": 1}, {"b": 2}])["m"]
    assert first[6] is None and first[7] == first[3]
    assert second[6] == first[3] and second[7] == first[3]
    assert codec.serde.loads_typed((second[4], second[5])) == [{"b": 2}]
    assert store.read("m") == [{"a": 1}, {"b": 2}]


def test_changed_prefix_or_other_types_are_snapshots(codec: SaverCodec) -> None:
    """A list whose old part changed, a non-list and an absent value are stored in full."""
    store = Store(codec)
    store.put(m=[1, 2])
    assert store.put(m=[1, 3, 4])["m"][6] is None
    assert store.put(m="text")["m"][6] is None
    assert store.put(m=[1])["m"][6] is None  # the tip was dropped by the non-list
    absent = store.put(m=None)["m"]
    assert absent[4] == EMPTY and store.read("m") is not None


def test_snapshots_keep_total_bytes_linear(codec: SaverCodec) -> None:
    """Growing a list 400 times stores <= 3x its final size, and every version reads back."""
    store, items, history = Store(codec), [], []
    for i in range(400):
        items = [*items, {"i": i, "text": "x" * 40}]
        store.put(m=items)
        history.append((store.versions["m"], items))
    stored = sum(len(data) for (_, _, channel, _), (_, data, _) in store.blobs.items())
    assert stored <= 3 * len(codec.serde.dumps_typed(items)[1])
    assert sum(base is None for _, _, base in store.blobs.values()) > 3
    for version, expected in history[::13]:
        assert store.read("m", version) == expected


def test_tips_are_remembered_only_on_commit(codec: SaverCodec) -> None:
    """An uncommitted put (failed transaction) is never used as a delta base."""
    store = Store(codec)
    first = store.put(m=[1])["m"]
    store.put(commit=False, m=[1, 2])
    third = store.put(m=[1, 2, 3])["m"]
    assert third[6] == first[3]


def test_a_list_replaced_by_another_value_is_no_delta_base_after(codec: SaverCodec) -> None:
    """A channel whose list gave way to another value (or none) forgets the list: the next
    list is stored whole; channels that never held a list carry nothing to forget."""
    store = Store(codec)
    store.put(m=[1])
    plan = codec.plan_put(CONFIG, empty_checkpoint(), {}, {"n": next_string_version(None)})
    assert plan.tips == []
    for replaced in ("text", None):
        store.put(m=replaced)
        again = store.put(m=[1, 2])["m"]
        assert again[6] is None and store.read("m") == [1, 2]


def test_no_delta_for_versions_that_do_not_sort(codec: SaverCodec) -> None:
    """Integer versions of different widths (9 -> 10) never produce a delta."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"m": [1]}
    codec.plan_put(CONFIG, cp, {}, {"m": 9}).commit()
    cp["channel_values"] = {"m": [1, 2]}
    (row,) = codec.plan_put(CONFIG, cp, {}, {"m": 10}).blob_rows
    assert row[6] is None


def test_elements_with_odd_equality_force_a_snapshot() -> None:
    """An element whose == raises is treated as changed, not as an error."""

    class Odd:
        def __eq__(self, other: object) -> bool:
            raise ValueError("ambiguous")

        __hash__ = object.__hash__

    codec = SaverCodec(JsonSerde())
    tip_list = [Odd()]
    codec._remember([(("t", "", "m"), codec._encode_list(("t", "", "m"), "1", tip_list)[3])])
    assert codec._encode_list(("t", "", "m"), "2", [Odd(), 1])[2] is None


def test_forget_thread_and_bounded_memory(codec: SaverCodec) -> None:
    """Deleting a thread drops its tips, and at most max_tips lists are remembered."""
    codec.max_tips = 3
    for thread in "abcde":
        cp = empty_checkpoint()
        cp["channel_values"] = {"m": [thread]}
        config = {"configurable": {"thread_id": thread}}
        codec.plan_put(config, cp, {}, {"m": next_string_version(None)}).commit()
    assert [key[0] for key in codec._tips] == ["c", "d", "e"]
    codec.forget_thread("d")
    assert [key[0] for key in codec._tips] == ["c", "e"]


def test_missing_delta_base_is_a_coded_error(codec: SaverCodec) -> None:
    """A delta whose base row is gone raises SaverError SG414 instead of wrong data."""
    store = Store(codec)
    first = store.put(m=[1])["m"]
    store.put(m=[1, 2])
    del store.blobs[first[:4]]
    with pytest.raises(SaverError) as info:
        store.read("m")
    assert info.value.code == "SG414"


def test_put_writes_rows_and_checkpoint_id_required(codec: SaverCodec) -> None:
    """Regular writes get their position as idx, special ones the fixed negative idx."""
    config = {"configurable": {"thread_id": "t", "checkpoint_id": "c1"}}
    regular, special = codec.plan_writes(config, [("a", 1), ("__interrupt__", 2)], "task", "p")
    assert [(r[4], r[5]) for r in regular] == [(0, "a")]
    assert [(r[4], r[5], r[8]) for r in special] == [(-3, "__interrupt__", "p")]
    with pytest.raises(SaverError) as info:
        codec.plan_writes(CONFIG, [("a", 1)], "task")
    assert info.value.code == "SG411"


def test_dumps_value_encodes_runs_once_with_the_serializers_bytes() -> None:
    """A list of runs of one object (``[item] * n`` appended again and again) is encoded a
    run at a time: the bytes are the serializer's; what it cannot encode raises as before."""
    serde = JsonPlusSerializer()
    codec = SaverCodec(serde)
    item = {"kind": "note", "tags": ["a", "b"], "meta": {"score": 0.5}}
    for value in ([item] * 30 + [1] * 5 + [item] * 9, [item] * 3, ["x", "y"] * 20, []):
        assert codec.dumps_value(value) == serde.dumps_typed(value)
    with pytest.raises(SerializationError):
        codec.dumps_value([object()] * 20)
