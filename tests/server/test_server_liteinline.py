"""SQLite statements on the event loop, in a thread only when the database is locked
(``storage/liteinline.py``; used by the documents store, ``LitePool`` and ``FencedSqliteSaver``)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from stepgraph.checkpoint.base import empty_checkpoint
from stepgraph.checkpoint.sqlite import connect
from stepgraph.server.cluster.fence import FencedSqliteSaver
from stepgraph.server.cluster.litepool import LitePool
from stepgraph.server.cluster.notify import LocalListener
from stepgraph.server.cluster.schema import setup_cluster_schema
from stepgraph.server.storage.liteinline import Checkpointer, is_busy, prepare_inline
from stepgraph.server.storage.sqlite import SqliteDocStore


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "db.sqlite")


@pytest.fixture
def holder(path: str) -> Iterator[sqlite3.Connection]:
    """Another connection of the file, to hold its write lock (``BEGIN IMMEDIATE``)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.rollback()
        conn.close()


async def _while_locked(holder: sqlite3.Connection, work: asyncio.Future[object]) -> int:
    """Hold the write lock while ``work`` waits for it; the loop's ticks meanwhile."""
    ticks = 0
    for _ in range(10):  # the loop keeps running: the statement waits in a thread
        await asyncio.sleep(0.01)
        ticks += 1
    assert not work.done()
    holder.commit()
    await asyncio.wait_for(work, 10)
    return ticks


def test_a_locked_database_is_busy_for_a_connection_that_does_not_wait(
    path: str, holder: sqlite3.Connection
) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    prepare_inline(conn, checkpoints=False)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("BEGIN IMMEDIATE")
    assert is_busy(caught.value)
    assert not is_busy(sqlite3.OperationalError("no such table: x"))
    assert not is_busy(ValueError("locked"))
    conn.close()


async def test_the_documents_store_waits_in_a_thread_for_a_locked_database(
    path: str, holder: sqlite3.Connection
) -> None:
    docs = SqliteDocStore(path)
    await docs.setup()
    await docs.put("thread", "t1", {"thread_id": "t1", "status": "idle"})
    assert (await docs.get("thread", "t1"))["status"] == "idle"  # type: ignore[index]
    holder.execute("BEGIN IMMEDIATE")
    assert (await docs.get("thread", "t1"))["status"] == "idle"  # type: ignore[index]  # reads do not wait
    work = asyncio.ensure_future(docs.put("thread", "t1", {"thread_id": "t1", "status": "busy"}))
    assert await _while_locked(holder, work) == 10
    assert (await docs.get("thread", "t1"))["status"] == "busy"  # type: ignore[index]
    await docs.close()


@pytest.fixture
async def pool(path: str) -> AsyncIterator[LitePool]:
    pool = LitePool(path, LocalListener())
    await pool.open()
    await setup_cluster_schema(pool)
    try:
        yield pool
    finally:
        await pool.close()


async def test_a_pool_transaction_waits_in_a_thread_for_a_locked_database(
    pool: LitePool, holder: sqlite3.Connection
) -> None:
    async def enqueue() -> None:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO sg_run_queue (run_id, thread_id, status) VALUES (%s, %s, 'pending')",
                ("r1", "t1"),
            )
            await conn.execute("SELECT pg_notify('sg_wake', '')")

    holder.execute("BEGIN IMMEDIATE")
    work = asyncio.ensure_future(enqueue())
    await _while_locked(holder, work)
    async with pool.connection() as conn:
        rows = await (await conn.execute("SELECT run_id, status FROM sg_run_queue")).fetchall()
    assert rows == [("r1", "pending")]


async def test_an_autocommit_write_of_the_pool_waits_for_a_locked_database(
    pool: LitePool, holder: sqlite3.Connection
) -> None:
    async def count(name: str) -> None:
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_cluster_counters (name, n) VALUES (%s, 1)", (name,))

    await count("a")  # at once
    holder.execute("BEGIN IMMEDIATE")
    work = asyncio.ensure_future(count("b"))
    await _while_locked(holder, work)
    async with pool.connection() as conn:
        rows = await (
            await conn.execute("SELECT name FROM sg_cluster_counters ORDER BY name")
        ).fetchall()
    assert rows == [("a",), ("b",)]


async def test_the_inline_saver_writes_on_the_loop_or_waits_for_the_lock(
    pool: LitePool, path: str, holder: sqlite3.Connection
) -> None:
    conn = connect(path)
    saver = FencedSqliteSaver(conn)
    await saver.setup()
    commits: list[int] = []
    await asyncio.to_thread(saver.run_inline, lambda: commits.append(1))
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    first = await saver.aput(config, empty_checkpoint(), {"step": 0}, {})
    holder.execute("BEGIN IMMEDIATE")
    assert (await saver.aget_tuple(first)) is not None  # a read starts at once under the lock
    work = asyncio.ensure_future(saver.aput(first, empty_checkpoint(), {"step": 1}, {}))
    await _while_locked(holder, work)
    steps = sorted([c.metadata["step"] async for c in saver.alist(config)])
    assert steps == [0, 1]
    assert len(commits) == 2
    conn.close()


def test_the_checkpointer_copies_the_log_into_the_database_file(path: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    prepare_inline(conn, checkpoints=False)
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    checkpointer = Checkpointer(path, every=3)
    for _ in range(3):
        conn.execute("INSERT INTO t (b) VALUES (?)", ("x" * 20_000,))
        before = os.path.getsize(path)
        checkpointer.committed()
    checkpointer.close()  # waits for the checkpoint
    assert before < 20_000  # the rows were only in the log
    assert os.path.getsize(path) > 60_000
    conn.close()


async def test_the_pool_lends_the_connection_returned_last(pool: LitePool) -> None:
    """Most recently used first: its page cache is the likeliest to be current."""
    async with pool.connection() as first, pool.connection() as second:
        pass  # second is returned first, then first
    async with pool.connection() as again:
        assert again is first
    assert second is not first
