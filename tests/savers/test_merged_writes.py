"""A task's regular writes go in as one merged row only when the task has none stored yet,
on SQLite (a check, then the insert) and PostgreSQL (the insert checks it) alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.constants import ERROR
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def saver(request: Any, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as s:
            yield s
        return
    from stepgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(request.getfixturevalue("pg_dsn")) as s:
        s.setup()
        yield s


def _stored(saver: Any, config: Any) -> list[tuple[str, str, Any]]:
    found = saver.get_tuple(config)
    assert found is not None
    return sorted(found.pending_writes or [], key=repr)


def _config(saver: Any) -> Any:
    cp, new = next_checkpoint(saver, None, {"a": 1})
    return saver.put(thread_config("t"), cp, {"source": "loop", "step": 0}, new)


def test_merged_writes_after_single_ones_keep_the_first(saver: Any) -> None:
    """A task with a regular write stored keeps it; the rest of a later call is added."""
    config = _config(saver)
    saver.put_writes(config, [("a", "first")], "task1")
    saver.put_writes(config, [("a", "second"), ("b", "second")], "task1")
    assert _stored(saver, config) == sorted(
        [("task1", "a", "first"), ("task1", "b", "second")], key=repr
    )


def test_merged_writes_twice_keep_the_first(saver: Any) -> None:
    config = _config(saver)
    saver.put_writes(config, [("a", 1), ("b", 1)], "task1")
    saver.put_writes(config, [("a", 2), ("b", 2), ("c", 2)], "task1")
    saver.put_writes(config, [("a", 3), ("b", 3)], "task2")
    assert _stored(saver, config) == sorted(
        [("task1", "a", 1), ("task1", "b", 1), ("task1", "c", 2), ("task2", "a", 3),
         ("task2", "b", 3)], key=repr,
    )  # fmt: skip


def test_a_special_write_does_not_stop_a_merged_row(saver: Any) -> None:
    config = _config(saver)
    saver.put_writes(config, [(ERROR, "boom")], "task1")
    saver.put_writes(config, [("a", 1), ("b", 1)], "task1")
    saver.put_writes(config, [("a", 2), ("b", 2)], "task1")
    assert _stored(saver, config) == sorted(
        [("task1", ERROR, "boom"), ("task1", "a", 1), ("task1", "b", 1)], key=repr
    )


def _batch_ops(saver: Any) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """Save ops of two checkpoints of one thread and one of another, with repeated tasks,
    special writes and single writes, as the engine hands them to ``perform_batch``."""
    ops: list[tuple[Any, ...]] = []
    configs: list[Any] = []
    for thread in ("t", "u"):
        prev = None
        parent = thread_config(thread)
        for step, value in enumerate((1, 2) if thread == "t" else (3,)):
            cp, new = next_checkpoint(saver, prev, {"a": value, "b": [value] * 3})
            ops.append(("put", parent, cp, {"source": "loop", "step": step}, new))
            config = thread_config(thread, checkpoint_id=cp["id"])
            configs.append(config)
            ops += [
                ("put_writes", config, [("a", f"{value}-1")], "task1", ""),
                ("put_writes", config, [("a", f"{value}-2"), ("b", value)], "task1", ""),
                ("put_writes", config, [("a", value), ("b", value)], "task2", ""),
                ("put_writes", config, [("a", value), ("b", value)], "task2", ""),
                ("put_writes", config, [(ERROR, f"boom {value}")], "task3", ""),
                ("put_writes", config, [("a", value), ("b", value)], "task3", ""),
                ("put_writes", config, [(ERROR, "again")], "task3", ""),
            ]
            prev, parent = cp, config
    return ops, configs


def test_a_batch_stores_what_the_calls_one_by_one_store(saver: Any, tmp_path: Path) -> None:
    """``perform_batch`` groups the rows of many saves into one statement per kind; what is
    stored is what the same calls made one by one store, writes stored before included."""
    ops, configs = _batch_ops(saver)
    with SqliteSaver.from_conn_string(str(tmp_path / "one-by-one.db")) as reference:
        for target in (reference, saver):
            # a write stored before the batch: task2's rows of the first checkpoint stay
            target.put(*ops[0][1:])
            target.put_writes(configs[0], [("b", "before")], "task2")
        for op in ops:
            if op[0] == "put":
                reference.put(*op[1:])
            else:
                reference.put_writes(*op[1:])
        saver.perform_batch(ops)
        for config in configs:
            expected = _stored(reference, config)
            assert _stored(saver, config) == expected
            found = saver.get_tuple(config)
            assert found is not None
            assert found.checkpoint["channel_values"] == (
                reference.get_tuple(config).checkpoint["channel_values"]  # type: ignore[union-attr]
            )
    first = _stored(saver, configs[0])
    # task1: its single write, then the second call's write at the next index
    assert [w for w in first if w[0] == "task1"] == [("task1", "a", "1-1"), ("task1", "b", 1)]
    # task2 had a write stored at index 0 before the batch: only index 1 is added
    assert [w for w in first if w[0] == "task2"] == [("task2", "b", "before"), ("task2", "b", 1)]
    assert ("task3", ERROR, "again") in first and ("task3", "a", 1) in first
