"""Fixtures of the hostile-input tests: savers seeded with a thread, raw access to their
storage (as an attacker with database write access has), and an audit hook that records
every event through which decoding could reach code (process start, exec, imports, writes).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_blobs import corpus  # noqa: E402

PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
SAVER_KINDS = ["memory", "sqlite", "sqlite-async", "postgres", "postgres-async"]

# ------------------------------------------------------------------ the audit hook

_FORBIDDEN = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill",
    "os.remove", "os.rmdir", "os.rename", "os.truncate", "os.chmod", "os.chown", "os.mkdir",
    "os.symlink", "os.link", "os.putenv", "os.unsetenv", "subprocess.Popen", "pty.spawn",
    "ctypes.", "shutil.", "webbrowser.open", "exec", "compile", "import", "marshal.loads",
    "pickle.find_class", "code.__new__", "function.__new__", "builtins.input",
    "socket.connect", "socket.bind", "urllib.Request", "http.client.connect",
)  # fmt: skip


class Watch:
    """Records forbidden audit events raised while ``active`` (any thread)."""

    def __init__(self) -> None:
        self.active = False
        self.events: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode = str(args[0]), str(args[1] or "r")
            if any(c in mode for c in "wax+") or "zoneinfo" not in path and not path.endswith(
                (".py", ".pyc", ".so")
            ):
                with self.lock:
                    self.events.append((event, repr(args)[:200]))
            return
        if event.startswith(_FORBIDDEN):
            with self.lock:
                self.events.append((event, repr(args)[:200]))

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Record forbidden events raised inside the block."""
        self.active = True
        try:
            yield
        finally:
            self.active = False


_WATCH = Watch()
sys.addaudithook(_WATCH.hook)


@pytest.fixture(scope="session")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file every hostile payload tries to create (must never exist)."""
    return tmp_path_factory.mktemp("marker") / "pwned"


@pytest.fixture(scope="session")
def hostile(marker: Path) -> list[Any]:
    """The corpus, with the decoder's legitimate first-use imports done (so the audit hook
    may treat any later import as one a blob caused)."""
    from stepgraph.checkpoint.serde import JsonPlusSerializer

    cases = corpus(str(marker))
    for backend in ("ormsgpack", "msgpack"):
        serde = JsonPlusSerializer(backend=backend)
        for case in cases:
            try:
                serde.loads_typed(case.typed)
            except Exception:
                pass
    assert not marker.exists()
    return cases


@pytest.fixture
def watch(marker: Path, hostile: list[Any]) -> Iterator[Watch]:
    """The audit watch (``with watch.reading(): ...``); afterwards asserts that no forbidden
    event was recorded and that no marker file exists. (Depends on ``hostile`` for its
    warm-up: the decoder's own first-use imports happen before any watch.)"""
    _WATCH.events = []
    yield _WATCH
    _WATCH.active = False
    assert not marker.exists(), "a hostile payload ran"
    assert _WATCH.events == [], _WATCH.events


# ------------------------------------------------------------------ savers and their storage


def _pg_reason() -> str | None:
    try:
        import psycopg

        psycopg.connect(PG_BASE, connect_timeout=2).close()
    except Exception as exc:  # ImportError or any connection failure
        return f"PostgreSQL not reachable at {PG_BASE}: {exc}"
    return None


@pytest.fixture(scope="module")
def pg_schema() -> Iterator[str]:
    """One PostgreSQL schema per test module (each case writes its own thread)."""
    reason = _pg_reason()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"sg_hostile_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@dataclass
class Storage:
    """A saver and the raw storage behind it."""

    kind: str
    saver: Any
    is_async: bool
    raw: Any = None
    """sqlite3 / psycopg connection of the "attacker" (SQL kinds)."""
    threads: list[str] = field(default_factory=list)

    @property
    def sql(self) -> bool:
        return self.raw is not None

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Run SQL as the attacker (``?`` placeholders on both databases)."""
        if self.kind.startswith("postgres"):
            sql = sql.replace("?", "%s")
        cur = self.raw.execute(sql, params)
        rows = cur.fetchall() if cur.description else []
        if self.kind.startswith("sqlite"):
            self.raw.commit()
        return rows

    def stored_thread(self, thread_id: str) -> str:
        """What the rows of ``thread_id`` store (long ids are stored as a key)."""
        found = self.execute("SELECT thread_key FROM sg_threads WHERE thread_id = ?", (thread_id,))
        return f"#{found[0][0]}" if found else thread_id

    def plant_channel(self, thread_id: str, typed: tuple[str, bytes], channel: str = "messages") -> None:
        """Replace every stored version of ``channel`` by ``typed`` (no delta bases)."""
        typ, data = typed
        if self.sql:
            thread_id = self.stored_thread(thread_id)
            stored = "" if typ == "msgpack" else typ
            n = self.execute("UPDATE sg_checkpoint_blobs SET type = ?, blob = ?, base_version = NULL "
                             "WHERE thread_id = ? AND channel = ?", (stored, data, thread_id, channel))
            assert n == [] and self.count("sg_checkpoint_blobs", thread_id) > 0
            return
        blobs = self.saver.blobs
        keys = [k for k in blobs if k[0] == thread_id and k[2] == channel]
        assert keys
        for key in keys:
            blobs[key] = (typ, data, None)

    def plant_checkpoint(self, thread_id: str, typed: tuple[str, bytes]) -> None:
        """Replace every checkpoint row of the thread by ``typed`` (full rows)."""
        typ, data = typed
        if self.sql:
            thread_id = self.stored_thread(thread_id)
            stored = "" if typ == "msgpack" else typ
            self.execute("UPDATE sg_checkpoints SET type = ?, checkpoint = ?, kind = 0 "
                         "WHERE thread_id = ?", (stored, data, thread_id))
            return
        for ns_rows in self.saver.storage[thread_id].values():
            for cid, (_, metadata, parent) in list(ns_rows.items()):
                ns_rows[cid] = (typed, metadata, parent)

    def plant_write(self, thread_id: str, typed: tuple[str, bytes]) -> None:
        """Replace every pending write of the thread by ``typed``."""
        typ, data = typed
        if self.sql:
            thread_id = self.stored_thread(thread_id)
            stored = "" if typ == "msgpack" else typ
            self.execute("UPDATE sg_checkpoint_writes SET type = ?, blob = ? WHERE thread_id = ?",
                         (stored, data, thread_id))
            return
        for key, writes in self.saver.writes.items():
            if key[0] == thread_id:
                for wkey, (task, channel, _, path) in list(writes.items()):
                    writes[wkey] = (task, channel, typed, path)

    def count(self, table: str, thread_id: str) -> int:
        return self.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = ?", (thread_id,))[0][0]


def _sqlite_raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    return conn


@pytest.fixture(params=SAVER_KINDS)
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Each saver kind in turn, with the attacker's raw connection to its storage."""
    kind = request.param
    if kind == "memory":
        from stepgraph.checkpoint.memory import InMemorySaver

        yield Storage(kind, InMemorySaver(), False)
    elif kind.startswith("sqlite"):
        path = tmp_path / "cp.db"
        if kind == "sqlite":
            from stepgraph.checkpoint.sqlite import SqliteSaver

            with SqliteSaver.from_conn_string(str(path)) as saver:
                saver.setup()
                raw = _sqlite_raw(path)
                yield Storage(kind, saver, False, raw)
                raw.close()
        else:
            from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
                await saver.setup()
                raw = _sqlite_raw(path)
                yield Storage(kind, saver, True, raw)
                raw.close()
    else:
        dsn = request.getfixturevalue("pg_schema")
        import psycopg

        raw = psycopg.connect(dsn, autocommit=True)
        try:
            if kind == "postgres":
                from stepgraph.checkpoint.postgres import PostgresSaver

                with PostgresSaver.from_conn_string(dsn) as saver:
                    saver.setup()
                    yield Storage(kind, saver, False, raw)
            else:
                from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
                    await saver.setup()
                    yield Storage(kind, saver, True, raw)
        finally:
            raw.close()
