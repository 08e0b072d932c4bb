"""A put that fails mid-transaction leaves nothing behind, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from stepgraph.checkpoint._flows import Op
from stepgraph.checkpoint._ids import stored_version
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config


class Crash(Exception):
    """Stands for the process dying between two statements."""


def crash_after_blobs(flow: Any) -> Any:
    """Wrap a flow so that it fails right after its blob rows were inserted."""
    op: Op = next(flow)
    while True:
        result = yield op
        if op.kind == "many" and "sg_checkpoint_blobs" in op.sql:
            raise Crash
        try:
            op = flow.send(result)
        except StopIteration as done:
            return done.value


def query(saver: Any, sql: str, *params: Any) -> Any:
    """The first row of ``sql`` on the saver's own connection."""
    return saver.conn.execute(saver.dialect.q(sql), params).fetchone()


def count_rows(saver: Any, table: str) -> int:
    """Rows in ``table`` for thread ``t``."""
    return query(saver, f"SELECT COUNT(*) FROM {table} WHERE thread_id = ?", "t")[0]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def saver(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    if request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as s:
            yield s
        return
    from stepgraph.checkpoint.postgres import PostgresSaver

    dsn = request.getfixturevalue("pg_dsn")
    with PostgresSaver.from_conn_string(dsn) as s:
        yield s


def test_failed_put_leaves_no_rows_and_no_delta_base(saver: Any, monkeypatch: Any) -> None:
    """A put failing after its blob insert rolls back, and later deltas never use its blobs."""
    first, new = next_checkpoint(saver, None, {"m": [1], "other": "a"})
    config = saver.put(thread_config("t"), first, {}, new)
    blobs_before = count_rows(saver, "sg_checkpoint_blobs")
    second, new = next_checkpoint(saver, first, {"m": [1, 2], "other": "b"})
    transact = saver._transact
    monkeypatch.setattr(
        saver, "_transact", lambda flow, write: transact(crash_after_blobs(flow), write)
    )
    with pytest.raises(Crash):
        saver.put(config, second, {}, new)
    monkeypatch.undo()
    assert count_rows(saver, "sg_checkpoint_blobs") == blobs_before
    assert count_rows(saver, "sg_checkpoints") == 1
    latest = saver.get_tuple(thread_config("t"))
    assert latest is not None and latest.checkpoint["id"] == first["id"]
    retry, new = next_checkpoint(saver, first, {"m": [1, 2, 3]})
    saver.put(config, retry, {}, new)
    found = saver.get_tuple(thread_config("t"))
    assert found is not None
    assert found.checkpoint["channel_values"] == {"m": [1, 2, 3], "other": "a"}
    (base,) = query(
        saver,
        "SELECT base_version FROM sg_checkpoint_blobs WHERE thread_id = ? AND version = ?",
        "t",
        stored_version(retry["channel_versions"]["m"]),
    )
    assert base == stored_version(first["channel_versions"]["m"])
