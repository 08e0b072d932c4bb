"""SqliteSaver specifics: connection settings, versioned migrations, isolation from LangGraph."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from stepgraph.checkpoint._flows import _blobs, drive, execute
from stepgraph.checkpoint._sql import SQLITE
from stepgraph.checkpoint.base import SaverError
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config


def test_setup_is_idempotent_and_sets_wal(tmp_path: Path) -> None:
    """setup() twice records one migration and leaves the file in WAL mode with a busy timeout."""
    with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        saver.setup()
        saver.setup()
        assert saver.conn.execute("SELECT v FROM sg_checkpoint_migrations").fetchall() == [(0,), (1,), (2,)]
        assert saver.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert saver.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_schema_is_created_on_first_use(tmp_path: Path) -> None:
    """Without setup(), the first call creates the tables."""
    with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        assert saver.get_tuple(thread_config("t")) is None
        tables = {r[0] for r in saver.conn.execute("SELECT name FROM sqlite_master")}
        assert {"sg_checkpoints", "sg_checkpoint_blobs", "sg_checkpoint_writes"} <= tables


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """A database migrated by a newer stepgraph raises SaverError SG413."""
    path = str(tmp_path / "a.db")
    with SqliteSaver.from_conn_string(path) as saver:
        saver.setup()
        saver.conn.execute("INSERT INTO sg_checkpoint_migrations (v) VALUES (99)")
    with SqliteSaver.from_conn_string(path) as saver, pytest.raises(SaverError) as info:
        saver.setup()
    assert info.value.code == "SG413"


def test_langgraph_tables_are_left_alone(tmp_path: Path) -> None:
    """An existing LangGraph 'checkpoints' table in the same file is neither read nor changed."""
    conn = sqlite3.connect(str(tmp_path / "a.db"), check_same_thread=False)
    conn.execute("CREATE TABLE checkpoints (thread_id TEXT, checkpoint BLOB)")
    conn.execute("INSERT INTO checkpoints VALUES ('t', x'00')")
    conn.commit()
    saver = SqliteSaver(conn)
    cp, new = next_checkpoint(saver, None, {"a": 1})
    saver.put(thread_config("t"), cp, {}, new)
    assert saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == (1,)
    assert saver.get_tuple(thread_config("t")) is not None


def test_default_connection_settings_survive_user_connections() -> None:
    """A user connection with a row factory and legacy transactions still works."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.row_factory = sqlite3.Row
    saver = SqliteSaver(conn)
    cp, new = next_checkpoint(saver, None, {"m": [1, 2]})
    config = saver.put(thread_config("t"), cp, {}, new)
    found = saver.get_tuple(config)
    assert found is not None and found.checkpoint["channel_values"] == {"m": [1, 2]}
    assert not conn.in_transaction


async def test_async_saver_setup_and_connection_close(tmp_path: Path) -> None:
    """AsyncSqliteSaver has an async setup() and closes its connection on exit."""
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        await saver.setup()
        assert await saver.aget_tuple(thread_config("t")) is None
    with pytest.raises(sqlite3.ProgrammingError):
        saver.conn.execute("SELECT 1")


def test_blob_rows_of_one_thread_equal_those_of_the_query_for_many(tmp_path: Path) -> None:
    """``get_tuple`` fetches a thread's blob rows without their thread and namespace columns;
    keyed back, they are the rows the query for several threads (``list``) returns."""
    with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        config, cp = thread_config("t"), None
        for step in range(4):  # a growing list: a snapshot then delta rows
            cp, versions = next_checkpoint(saver, cp, {"items": list(range((step + 1) * 40))})
            config = saver.put(config, cp, {"step": step}, versions)
        other, other_versions = next_checkpoint(saver, None, {"items": [1]})
        saver.put(thread_config("u"), other, {}, other_versions)
        keys = {(r[0], "", "items", r[1]) for r in saver.conn.execute(
            "SELECT thread_id, version FROM sg_checkpoint_blobs")}  # fmt: skip
        cur = saver.conn.cursor()
        both = drive(_blobs(SQLITE, keys), lambda op: execute(cur, op))
        one = drive(_blobs(SQLITE, {k for k in keys if k[0] == "t"}), lambda op: execute(cur, op))
        assert len(one) >= 4 and one == {k: v for k, v in both.items() if k[0] == "t"}
