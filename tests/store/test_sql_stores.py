"""SQLite and PostgreSQL store specifics: storage, transactions, sweeping, drivers, imports."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from stepgraph.store import _sql
from stepgraph.store.base import StoreError
from stepgraph.store.sqlite import SqliteStore, connect
from stepgraph.testing.store_conformance import VOCAB, FakeClock, embed_texts

INDEX = {"dims": len(VOCAB), "embed": embed_texts, "fields": ["t"]}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def open_store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """A factory of sync SQL stores (sqlite file or PostgreSQL schema) and a row counter."""
    if request.param == "sqlite":
        conns: list[sqlite3.Connection] = []

        def make(**kwargs: Any) -> SqliteStore:
            conns.append(connect(str(tmp_path / "s.db")))
            return SqliteStore(conns[-1], **kwargs)

        yield make
        for conn in conns:
            conn.close()
        return
    import psycopg

    from stepgraph.store.postgres import PostgresStore

    dsn = request.getfixturevalue("pg_dsn")
    pg_conns: list[Any] = []

    def make_pg(**kwargs: Any) -> PostgresStore:
        pg_conns.append(psycopg.connect(dsn, autocommit=True))
        return PostgresStore(pg_conns[-1], **kwargs)

    yield make_pg
    for conn in pg_conns:
        conn.close()


def count(store: Any, table: str) -> int:
    """Rows in ``table``, read through the store's own connection."""
    with store.lock:
        return store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_items_persist_across_connections(open_store: Any) -> None:
    """What one store writes, a store on another connection reads."""
    open_store().put(("a",), "k", {"v": [1, "x"]})
    assert open_store().get(("a",), "k").value == {"v": [1, "x"]}


def test_filtered_search_scans_in_chunks(open_store: Any, monkeypatch: Any) -> None:
    """A filtered search reads rows in chunks until its page is full."""
    monkeypatch.setattr(_sql, "SCAN_CHUNK", 3)
    store = open_store()
    for i in range(20):
        store.put(("a", str(i % 3)), f"k{i:02}", {"n": i})
    found = store.search(("a",), filter={"n": {"$gte": 5}}, limit=4, offset=3)
    assert [item.key for item in found] == ["k08", "k09", "k10", "k11"]
    assert len(store.search(("a",), filter={"n": {"$lt": 100}}, limit=50)) == 20


def test_writes_sweep_expired_rows_and_vectors(open_store: Any) -> None:
    """Writes delete expired rows (and their vectors) once per sweep interval."""
    store = open_store(index=INDEX, ttl={"sweep_interval_minutes": 1})
    store.clock = clock = FakeClock()
    store.put(("a",), "old", {"t": "cat"}, ttl=1)
    clock.advance(0.5)
    store.put(("a",), "new", {"t": "dog"})
    assert count(store, "sg_store") == 2  # the interval has not passed: no sweep yet
    clock.advance(1)
    store.put(("a",), "newer", {"t": "dog"})
    assert count(store, "sg_store") == 2 and count(store, "sg_store_vectors") == 2


def test_delete_removes_vectors(open_store: Any) -> None:
    """Deleting an item deletes its vectors."""
    store = open_store(index=INDEX)
    store.put(("a",), "k", {"t": "cat"})
    assert count(store, "sg_store_vectors") == 1
    store.delete(("a",), "k")
    assert count(store, "sg_store_vectors") == 0


def test_newer_schema_raises(open_store: Any) -> None:
    """A database migrated by a newer stepgraph raises StoreError SG438."""
    store = open_store()
    store.setup()
    store.setup()
    with store.lock:
        store.conn.execute("INSERT INTO sg_store_migrations (v) VALUES (99)")
    try:
        with pytest.raises(StoreError) as info:
            open_store().get(("a",), "k")
        assert info.value.code == "SG438"
    finally:
        with store.lock:
            store.conn.execute("DELETE FROM sg_store_migrations WHERE v = 99")


def test_non_json_value_raises_and_writes_nothing(open_store: Any) -> None:
    """A value JSON cannot encode raises StoreError SG437; the batch is rolled back."""
    store = open_store()
    with pytest.raises(StoreError) as info:
        store.put(("a",), "k", {"when": datetime.now(UTC)})
    assert info.value.code == "SG437"
    assert store.list_namespaces() == []


def test_sqlite_tables_are_prefixed(tmp_path: Any) -> None:
    """The SQLite store only creates sg_store* tables (never LangGraph's "store")."""
    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
        store.setup()
        rows = store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        names = {name for (name,) in rows} - {"sqlite_sequence"}
    assert names == {"sg_store", "sg_store_migrations", "sg_store_vectors"}


def test_sqlite_joins_callers_transaction(tmp_path: Any) -> None:
    """Inside the caller's transaction, writes commit or roll back with it."""
    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
        store.setup()
        store.conn.execute("BEGIN")
        store.put(("a",), "k", {"v": 1})
        store.conn.rollback()
        assert store.get(("a",), "k") is None


def test_sqlite_concurrent_writers(tmp_path: Any) -> None:
    """Threads sharing a store and stores sharing a file lose no writes."""
    path = str(tmp_path / "s.db")
    with SqliteStore.from_conn_string(path) as shared, SqliteStore.from_conn_string(path) as other:
        shared.setup()

        def work(store: SqliteStore, n: int) -> None:
            for i in range(25):
                store.put(("w", str(n)), str(i), {"i": i})

        threads = [
            threading.Thread(target=work, args=(s, n)) for n, s in enumerate([shared] * 3 + [other])
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(other.search(("w",), limit=1000)) == 100


async def test_async_methods_of_sqlite_store_use_a_thread(tmp_path: Any) -> None:
    """SqliteStore's async methods work on a running loop (SQL runs in a worker thread)."""
    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
        await asyncio.gather(*(store.aput(("a",), str(i), {"i": i}) for i in range(10)))
        assert len(await store.asearch(("a",), limit=20)) == 10


def test_missing_psycopg_raises(monkeypatch: Any) -> None:
    """Without psycopg, creating a PostgreSQL store raises StoreError SG434 with a hint."""
    from stepgraph.store.postgres import AsyncPostgresStore, PostgresStore

    monkeypatch.setitem(sys.modules, "psycopg", None)
    for cls in (PostgresStore, AsyncPostgresStore):
        with pytest.raises(StoreError, match="psycopg") as info:
            cls(object())
        assert info.value.code == "SG434" and "stepgraph[postgres]" in str(info.value)


def test_imports_are_lazy() -> None:
    """Importing the store modules loads neither psycopg nor numpy nor langchain."""
    code = (
        "import sys, stepgraph.store, stepgraph.store.memory, stepgraph.store.postgres;"
        "import stepgraph.store.postgres.aio;"
        "bad = [m for m in ('psycopg', 'numpy', 'langchain_core', 'sqlite3') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.postgres
async def test_async_postgres_sync_call_on_its_loop_raises(pg_dsn: str) -> None:
    """A sync method of AsyncPostgresStore called on its loop raises SG435; off-loop works."""
    from stepgraph.store.postgres import AsyncPostgresStore

    async with AsyncPostgresStore.from_conn_string(pg_dsn) as store:
        await store.setup()
        with pytest.raises(StoreError) as info:
            store.get(("a",), "k")
        assert info.value.code == "SG435"
        await asyncio.to_thread(store.put, ("a",), "k", {"v": 1})
        assert (await store.aget(("a",), "k")).value == {"v": 1}


@pytest.mark.postgres
async def test_postgres_stores_on_pools(pg_dsn: str) -> None:
    """Both PostgreSQL stores accept connection pools."""
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

    from stepgraph.store.postgres import AsyncPostgresStore, PostgresStore

    kwargs = {"autocommit": True}
    with ConnectionPool(pg_dsn, min_size=1, max_size=2, kwargs=kwargs, open=True) as pool:
        PostgresStore(pool).put(("p",), "k", {"v": 1})
    async with AsyncConnectionPool(
        pg_dsn, min_size=1, max_size=2, kwargs=kwargs, open=False
    ) as apool:
        store = AsyncPostgresStore(apool)
        assert (await store.aget(("p",), "k")).value == {"v": 1}
        await asyncio.gather(*(store.aput(("p",), str(i), {}) for i in range(5)))
        assert await store.alist_namespaces() == [("p",)]


@pytest.mark.parametrize("kw", [{"pipeline": True}, {"pool_config": {"min_size": 1, "max_size": 2}}])
def test_postgres_from_conn_string_takes_langgraphs_options(pg_dsn: str, kw: dict) -> None:
    """``pipeline=`` and ``pool_config=`` of LangGraph's ``from_conn_string`` (sync and async)."""
    import asyncio

    from stepgraph.store.postgres import AsyncPostgresStore, PostgresStore

    with PostgresStore.from_conn_string(pg_dsn, **kw) as store:
        store.put(("opts",), "k", {"a": 1})
        assert store.get(("opts",), "k").value == {"a": 1}

    async def run() -> None:
        async with AsyncPostgresStore.from_conn_string(pg_dsn, **kw) as store:
            await store.aput(("opts",), "k2", {"b": 2})
            assert (await store.aget(("opts",), "k2")).value == {"b": 2}

    asyncio.run(run())


def test_postgres_pipeline_with_a_pool_is_refused(pg_dsn: str) -> None:
    from stepgraph.store.postgres import PostgresStore

    with pytest.raises(ValueError, match="single connection"), PostgresStore.from_conn_string(
        pg_dsn, pipeline=True, pool_config={"max_size": 2}
    ):
        pass
