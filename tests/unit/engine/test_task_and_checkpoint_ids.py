"""``engine.ids``: task ids must stay what earlier versions derived (saved writes attach to
re-planned tasks by id), checkpoint ids sort in creation order."""

from __future__ import annotations

import re

from stepgraph.engine import ids
from stepgraph.engine.ids import checkpoint_id, path_sort_key, task_id


def test_task_ids_are_stable() -> None:
    # digests of earlier releases (one blake2b update per part and NUL): never change them
    assert (
        task_id(
            "1ef4f797-8335-6428-8001-8a1503f9b875",
            "",
            5,
            "node_5",
            "__pregel_pull",
            "branch:to:node_5",
        )
        == "c272e38a-101a-6610-260d-6841812ccd88"
    )
    assert task_id() == "cae66941-d9ef-bd40-4e4d-88758ea67670"
    assert task_id("x") == "9c64a38a-9c88-7cc3-15a8-4486433085d8"


def test_six_part_ids_read_each_part_as_str() -> None:
    # six parts (the common PULL and PUSH ids) take a shorter path: the same text as any
    # other count, each part as ``str(part)`` (never ``format(part)``)
    class Name(str):
        def __format__(self, spec: str) -> str:
            return "formatted"

    name = Name("node_5")
    assert f"{name}" == "formatted" and str(name) == "node_5"
    six = ("ckpt", "ns", 5, name, "__pregel_push", True)
    assert task_id(*six) == task_id("ckpt", "ns", 5, "node_5", "__pregel_push", "True")
    assert task_id(*six, "x") == task_id("ckpt", "ns", "5", "node_5", "__pregel_push", True, "x")


def test_checkpoint_ids_have_the_uuid6_layout_and_sort_by_creation() -> None:
    made = [checkpoint_id(step) for step in (0, 1, 2, 16383, 16384, 3)]
    for cid in made:
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", cid
        )
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    assert made[1][19:23] == "8001" and made[3][19:23] == "bfff" and made[4][19:23] == "8000"


def test_checkpoint_id_fields(monkeypatch) -> None:
    now = 0x1EF4F797_8335_428  # 100 ns ticks since 1582 (60 bits)
    monkeypatch.setattr(ids, "_time_ns", lambda: (now - 0x01B21DD213814000) * 100)
    monkeypatch.setattr(ids, "_last_ns", 0)
    monkeypatch.setattr(ids._rng, "getrandbits", lambda n: 0xABCDEF012345)
    assert checkpoint_id(7) == "1ef4f797-8335-6428-8007-abcdef012345"


def test_path_sort_keys() -> None:
    assert path_sort_key(("__pregel_pull", "a")) == "~__pregel_pull, a"
    assert path_sort_key(("__pregel_push", 3, False)) == "~__pregel_push, 0000000003, False"
    nested = ("__pregel_push", ("__pregel_pull", "x"), 2, "id", True)
    assert path_sort_key(nested) == "~__pregel_push, ~__pregel_pull, x, 0000000002, id, True"
    assert path_sort_key(("__pregel_pull", "a")) is path_sort_key(("__pregel_pull", "a"))
    keys = [
        path_sort_key(p)
        for p in (
            ("__pregel_push", 10, False),
            ("__pregel_pull", "b"),
            ("__pregel_push", 2, False),
            ("__pregel_pull", "a"),
        )
    ]
    assert sorted(keys) == [
        "~__pregel_pull, a",
        "~__pregel_pull, b",
        "~__pregel_push, 0000000002, False",
        "~__pregel_push, 0000000010, False",
    ]
