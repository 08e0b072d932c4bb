"""Schema v2 moves long thread ids of existing rows to short keys, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from stepgraph.checkpoint import _flows
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config

LONG = "0b8f1c7e-2d4a-4c11-9e0f-6a5b4c3d2e1f"


def _sqlite(tmp_path: Path) -> Callable[[], AbstractContextManager[Any]]:
    from stepgraph.checkpoint.sqlite import SqliteSaver

    return lambda: SqliteSaver.from_conn_string(str(tmp_path / "m.db"))


@pytest.fixture(params=["sqlite", "postgres"])
def open_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        yield _sqlite(tmp_path)
        return
    dsn = request.getfixturevalue("pg_dsn")
    from stepgraph.checkpoint.postgres import PostgresSaver

    yield lambda: PostgresSaver.from_conn_string(dsn)


def _sql(saver: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = saver.conn.execute(sql)
    rows = cur.fetchall() if cur.description else []
    if getattr(saver.conn, "commit", None) and saver.dialect.name == "sqlite":
        saver.conn.commit()
    return rows


def test_v2_gives_existing_long_thread_ids_a_key(
    open_saver: Callable[[], AbstractContextManager[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written before v2 with a long thread id are found by that id after migrating."""
    with open_saver() as saver:
        saver.setup()
        _sql(saver, "DROP TABLE sg_threads")
        _sql(saver, "DELETE FROM sg_checkpoint_migrations WHERE v = 2")
        monkeypatch.setattr(_flows, "THREAD_KEY_AFTER", 10_000)  # store ids as they are (v1)
        config, prev, items = thread_config(LONG), None, []
        for i in range(20):
            items = [*items, {"i": i, "text": "word " * 20}]
            cp, new = next_checkpoint(saver, prev, {"items": items})
            config = saver.put(config, cp, {"step": i}, new)
            prev = cp
        saver.put_writes(config, [("items", "pending")], "task-1")
        saver.put(thread_config("short"), next_checkpoint(saver, None, {"a": 1})[0], {}, {"a": "1"})
        assert {r[0] for r in _sql(saver, "SELECT thread_id FROM sg_checkpoints")} == {LONG, "short"}
        monkeypatch.undo()
    with open_saver() as saver:  # a new process: no memory of the old rows
        saver.setup()
        stored = {r[0] for r in _sql(saver, "SELECT DISTINCT thread_id FROM sg_checkpoints")}
        assert stored == {"#1", "short"}
        found = saver.get_tuple(thread_config(LONG))
        assert found is not None and found.config["configurable"]["thread_id"] == LONG
        assert found.checkpoint["channel_values"]["items"] == items
        assert found.pending_writes == [("task-1", "items", "pending")]
        assert len(list(saver.list(thread_config(LONG)))) == 20
        assert saver.get_tuple(thread_config("short")) is not None
        config, _ = found.config, None
        cp, new = next_checkpoint(saver, found.checkpoint, {"items": [*items, {"i": 20}]})
        saver.put(config, cp, {"step": 20}, new)
        latest = saver.get_tuple(thread_config(LONG))
        assert latest is not None and latest.checkpoint["channel_values"]["items"][-1] == {"i": 20}


def test_a_pre_release_v0_database_with_rows_is_refused(
    open_saver: Callable[[], AbstractContextManager[Any]],
) -> None:
    """v0 rows (pre-release format) are not misread: setup() raises SG418; an empty v0
    schema is upgraded."""
    from stepgraph.checkpoint._sql import MIGRATIONS
    from stepgraph.checkpoint.base import SaverError

    with open_saver() as saver:
        for statement in saver.dialect.migrations[0]:
            _sql(saver, statement)
        _sql(saver, saver.dialect.create_migrations)
        _sql(saver, "INSERT INTO sg_checkpoint_migrations (v) VALUES (0)")
        _sql(saver, "INSERT INTO sg_checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, "
                    "checkpoint, metadata_type, metadata) VALUES ('t', '', 'x', 'msgpack', "
                    "'', 'msgpack', '')")  # fmt: skip
    with open_saver() as saver, pytest.raises(SaverError) as info:
        saver.setup()
    assert info.value.code == "SG418"
    with open_saver() as saver:
        _sql(saver, "DELETE FROM sg_checkpoints")
        saver.setup()
        done = sorted(r[0] for r in _sql(saver, "SELECT v FROM sg_checkpoint_migrations"))
        assert done == list(range(len(MIGRATIONS)))
