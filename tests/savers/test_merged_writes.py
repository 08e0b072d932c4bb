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
