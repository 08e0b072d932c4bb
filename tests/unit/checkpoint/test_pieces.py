"""``_pieces.split_items``: a list of runs of one object (``[item] * n`` appended again and
again) is split a run at a time, with exactly the result of splitting it item by item,
including where the repeat allowance stops referencing a piece again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from stepgraph.checkpoint import _pieces
from stepgraph.checkpoint.serde import JsonPlusSerializer

PACK = JsonPlusSerializer()._codec.dumps
OBJECTS: list[Any] = [
    {"kind": "note", "text": "x" * 80},
    {"kind": "note", "text": "y" * 150, "n": 1},
    "z" * 70,
    [1, 2, 3] * 30,
    1,
    "short",
]


@pytest.mark.parametrize("allowance", [1 << 20, 0, 150, 1000])
def test_runs_split_as_item_by_item(monkeypatch: pytest.MonkeyPatch, allowance: int) -> None:
    monkeypatch.setattr(_pieces, "REPEAT_ALLOWANCE", allowance)
    rng = random.Random(allowance)
    for _ in range(200):
        items: list[Any] = []
        for _ in range(rng.randint(1, 10)):
            items += [rng.choice(OBJECTS)] * rng.randint(1, 30)
        by_runs = _pieces._split_runs(items, PACK)
        assert by_runs is not None
        assert by_runs == _pieces._split_each(items, PACK)  # the element-by-element path
        skeleton, pieces, total = by_runs
        typ, whole = JsonPlusSerializer().dumps_typed(items)
        assert total == len(whole)
        assert _pieces.join(skeleton, pieces.get) == whole


def test_run_path_keeps_repeats_within_the_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    item = {"text": "x" * 100}
    size = len(PACK(item))
    monkeypatch.setattr(_pieces, "REPEAT_ALLOWANCE", 3 * size)
    skeleton, pieces, _ = _pieces._split_runs([item] * 10, PACK)
    assert len(pieces) == 1
    # the first reference plus three repeats are references; the other six stay inline
    assert skeleton.count(PACK(item)) == 6
    assert _pieces.join(skeleton, pieces.get) == JsonPlusSerializer().dumps_typed([item] * 10)[1]


def test_split_items_takes_the_run_path_only_for_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = _pieces._split_runs
    monkeypatch.setattr(_pieces, "_split_runs", lambda items, pack: calls.append(1) or real(items, pack))
    _pieces.split_items([OBJECTS[0]] * 20, PACK)
    assert calls == [1]
    _pieces.split_items([{"i": i, "text": "x" * 80} for i in range(20)], PACK)
    assert calls == [1]


def test_encode_runs_is_the_list_encoding() -> None:
    rng = random.Random(5)
    for _ in range(200):
        items: list[Any] = []
        for _ in range(rng.randint(1, 8)):
            items += [rng.choice(OBJECTS)] * rng.randint(1, 25)
        data = _pieces.encode_runs(items, PACK)
        if data is not None:
            assert data == JsonPlusSerializer().dumps_typed(items)[1]
    assert _pieces.encode_runs([{"i": i} for i in range(20)], PACK) is None  # no runs
