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
