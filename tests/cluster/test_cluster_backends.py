"""The lease and fencing scenarios on both backends of the cluster code: SQLite (one process,
``stepgraph dev``) and PostgreSQL (skipped when unreachable). The same classes run on each;
only the pool differs (``LitePool`` or psycopg's)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cluster_harness import PG_BASE, unreachable

from stepgraph.checkpoint.base import empty_checkpoint
from stepgraph.server.cluster.dialect import dialect_of
from stepgraph.server.cluster.events import PgEvents, StaleEpoch
from stepgraph.server.cluster.fence import Lease, LeaseLost, check_fence, current_lease
from stepgraph.server.cluster.notify import LocalListener
from stepgraph.server.cluster.options import ClusterOptions
from stepgraph.server.cluster.pgqueue import ClusterRunQueue
from stepgraph.server.cluster.runlogs import Publisher
from stepgraph.server.cluster.schema import read_counters, setup_cluster_schema


@dataclass
class Db:
    """A cluster database: its pool and a fenced saver on the same database."""

    kind: str
    pool: Any
    saver: Any


@pytest.fixture(params=["sqlite", "postgres"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Db]:
    if request.param == "sqlite":
        from stepgraph.checkpoint.sqlite import connect
        from stepgraph.server.cluster.fence import FencedSqliteSaver
        from stepgraph.server.cluster.litepool import LitePool

        path = str(tmp_path / "db.sqlite")
        pool = LitePool(path, LocalListener())
        await pool.open()
        await setup_cluster_schema(pool)
        conn = connect(path)
        saver = FencedSqliteSaver(conn)
        await saver.setup()
        try:
            yield Db("sqlite", pool, saver)
        finally:
            await pool.close()
            conn.close()
        return
    reason = unreachable(redis=False)
    if reason:
        pytest.skip(reason)
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    from stepgraph.server.cluster.fence import FencedPostgresSaver

    schema = f"sg_be_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    pool = AsyncConnectionPool(
        f"{PG_BASE}?options=-csearch_path%3D{schema}",
        min_size=1,
        max_size=4,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0},
    )
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        saver = FencedPostgresSaver(pool)
        await saver.setup()
        yield Db("postgres", pool, saver)
    finally:
        await pool.close()
        async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")


async def _sql(
    db: Db, sql: str, params: tuple[Any, ...] = (), *, rows: bool = False
) -> list[tuple[Any, ...]]:
    async with db.pool.connection() as conn:
        cur = await conn.execute(sql, params)
        return await cur.fetchall() if rows else []


def _queue(db: Db, **opts: Any) -> ClusterRunQueue:
    options = ClusterOptions(lease_ttl=opts.get("lease_ttl", 30.0), heartbeat=1.0, reaper=1.0)

    async def never(job: Any) -> None:  # the scenarios claim and reap by hand
        raise AssertionError("not executed here")

    return ClusterRunQueue(None, db.pool, LocalListener(), options, never, n_jobs=2)  # type: ignore[arg-type]


async def _enqueue(db: Db, run_id: str, thread_id: str) -> None:
    async with db.pool.connection() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO sg_run_queue (run_id, thread_id, status) VALUES (%s, %s, 'pending')",
            (run_id, thread_id),
        )


async def _write(db: Db, lease: Lease, step: int) -> None:
    async def inner() -> None:
        current_lease.set(lease)
        config = {"configurable": {"thread_id": lease.thread_id, "checkpoint_ns": ""}}
        await db.saver.aput(config, empty_checkpoint(), {"step": step}, {})

    await asyncio.get_running_loop().create_task(inner())  # its own context: the lease stays there


async def _checkpoints(db: Db, thread_id: str) -> int:
    return len(
        [
            c
            async for c in db.saver.alist(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            )
        ]
    )


async def test_a_zombie_epoch_is_refused(db: Db) -> None:
    """A worker whose lease was reclaimed (its epoch 1 < 2) can commit nothing: checkpoint
    writes, the fence of a final status and event appends are all refused."""
    queue = _queue(db)
    await _enqueue(db, "r1", "t1")
    row = await queue._claim()
    assert row is not None and (row["run_id"], row["epoch"], row["attempt"]) == ("r1", 1, 1)
    lost: list[str] = []
    zombie = Lease("r1", "t1", 1, 1, on_lost=lambda: lost.append("lost"))
    await _write(db, zombie, 0)  # the lease holds: accepted
    await _sql(db, "UPDATE sg_run_queue SET lease_expires = 0 WHERE run_id = 'r1'")
    assert await queue.reap() == 1
    again = await queue._claim()
    assert again is not None and (again["epoch"], again["attempt"]) == (2, 2)
    with pytest.raises(LeaseLost):
        await _write(db, zombie, 1)
    assert lost == ["lost"] and zombie.refused == 1
    assert await _checkpoints(db, "t1") == 1
    async with db.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
        with pytest.raises(LeaseLost):  # the final status write's fence
            await check_fence(cur, zombie)
    fresh = Lease("r1", "t1", 2, 2)
    await _write(db, fresh, 1)  # the new holder commits
    assert await _checkpoints(db, "t1") == 2

    async def no_wait(run_id: str, timeout: float) -> None:
        await asyncio.sleep(0)

    events = PgEvents(db.pool, no_wait)
    with pytest.raises(StaleEpoch):
        await events.append("r1", [("values", b"zombie")], 1)
    await events.append("r1", [("values", b"fresh")], 2)
    assert [e.data for e in await events.read("r1", None, 10, 0.01)] == [b"fresh"]


async def test_an_expired_lease_is_reclaimed_and_a_live_one_is_not(db: Db) -> None:
    queue = _queue(db)
    await _enqueue(db, "live", "t1")
    await _enqueue(db, "dead", "t2")
    assert (await queue._claim() or {})["run_id"] == "live"
    assert (await queue._claim() or {})["run_id"] == "dead"
    await _sql(db, "UPDATE sg_run_queue SET lease_expires = 0 WHERE run_id = 'dead'")
    reaped: list[tuple[str, int]] = []

    async def on_reaped(run_id: str, epoch: int) -> None:
        reaped.append((run_id, epoch))

    queue.on_reaped = on_reaped
    assert await queue.reap() == 1
    assert reaped == [("dead", 1)]
    rows = dict(
        await _sql(db, "SELECT run_id, status FROM sg_run_queue ORDER BY run_id", rows=True)
    )
    assert rows == {"dead": "pending", "live": "running"}
    heartbeat = await _sql(
        db,
        "UPDATE sg_run_queue SET lease_expires = lease_expires + 1 WHERE run_id = %s"
        " AND lease_epoch = %s AND status = 'running' RETURNING cancel_action",
        ("dead", 1),
        rows=True,
    )
    assert heartbeat == []  # the lost holder's heartbeat finds nothing: its local run stops


async def test_a_claim_takes_the_head_of_each_thread_line_only(db: Db) -> None:
    queue = _queue(db)
    for run_id, thread_id in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        await _enqueue(db, run_id, thread_id)
    claimed = [(await queue._claim() or {}).get("run_id") for _ in range(3)]
    assert claimed == ["a1", "b1", None]  # a2 waits for a1
    await _sql(db, "UPDATE sg_run_queue SET status = 'done' WHERE run_id = 'a1'")
    assert (await queue._claim() or {}).get("run_id") == "a2"


async def test_one_running_run_per_thread_is_a_database_invariant(db: Db) -> None:
    await _sql(
        db, "INSERT INTO sg_run_queue (run_id, thread_id, status) VALUES ('a', 't', 'running')"
    )
    await _sql(
        db, "INSERT INTO sg_run_queue (run_id, thread_id, status) VALUES ('b', 't', 'pending')"
    )
    with pytest.raises(dialect_of(db.pool).unique_errors()):
        await _sql(db, "UPDATE sg_run_queue SET status = 'running' WHERE run_id = 'b'")


async def test_a_zombie_publisher_stops_and_counts(db: Db) -> None:
    await _sql(
        db,
        "INSERT INTO sg_run_queue (run_id, thread_id, status, lease_epoch) VALUES ('r1', 't1', 'running', 2)",
    )

    async def no_wait(run_id: str, timeout: float) -> None:
        await asyncio.sleep(0)

    stale: list[int] = []
    pub = Publisher(PgEvents(db.pool, no_wait), "r1", epoch=1, on_stale=stale.append)
    pub.push("values", b"1")
    pub.finish(end=True)
    await asyncio.wait_for(pub.task, 10)
    assert stale == [2] and pub.stale
    assert await _sql(db, "SELECT COUNT(*) FROM sg_run_events", rows=True) == [(0,)]
    assert await read_counters(db.pool) == {}


async def test_ended_streams_are_dropped_after_their_retention(db: Db) -> None:
    async def no_wait(run_id: str, timeout: float) -> None:
        await asyncio.sleep(0)

    events = PgEvents(db.pool, no_wait)
    await events.append("old", [("values", b"1"), ("__end__", b"{}")])
    await events.append("live", [("values", b"2")])
    await _sql(db, "UPDATE sg_run_events SET created_at = created_at - 100")
    await events.append("new", [("values", b"3"), ("__end__", b"{}")])
    assert await events.prune(50) == 2
    left = await _sql(db, "SELECT run_id FROM sg_run_events ORDER BY seq", rows=True)
    assert [r for (r,) in left] == ["live", "new", "new"]


async def test_commit_numbers_and_cuts_reach_a_reader_of_the_next_epoch(db: Db) -> None:
    """Each fenced write records its commit number in the queue row; the next claim returns
    the previous epoch's number (its cut) and starts counting again; the event store keeps
    tags and cuts, and a reader skips what the lost epoch published after its last commit."""
    from stepgraph.server.cluster.cuts import Committed, make_tag

    queue = _queue(db)
    await _enqueue(db, "r1", "t1")
    row = await queue._claim() or {}
    assert row["prev_commits"] == 0
    lease = Lease("r1", "t1", row["epoch"], row["attempt"])
    await _write(db, lease, 1)  # commit 1 (the saver)
    async with db.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
        await check_fence(cur, lease, await lease.begin_commit())  # commit 2 (a final status)
    assert await _sql(db, "SELECT commits FROM sg_run_queue", rows=True) == [(2,)]

    async def no_wait(run_id: str, timeout: float) -> None:
        await asyncio.sleep(0)

    events = PgEvents(db.pool, no_wait)
    await events.append(
        "r1",
        [("metadata", b"{}"), ("updates", b"a", make_tag(1, 2)), ("updates", b"b", make_tag(1, 3))],
        1,
    )
    await _sql(db, "UPDATE sg_run_queue SET lease_expires = 0")
    assert await queue.reap() == 1
    again = await queue._claim() or {}
    assert (again["epoch"], again["prev_commits"]) == (2, 2)
    assert await _sql(db, "SELECT commits FROM sg_run_queue", rows=True) == [(0,)]
    await events.cut("r1", 1, again["prev_commits"])
    await events.append("r1", [("updates", b"b", make_tag(2, 1))], 2)
    assert await events.cuts("r1") == {1: 2}
    committed = Committed(await events.cuts("r1"))
    kept = [e.data for e in await events.read("r1", None, 10, 0.01) if committed.keep(e)]
    assert kept == [b"{}", b"a", b"b"] and committed.skipped == 1
    stale = Lease("r1", "t1", 1, 1)
    with pytest.raises(LeaseLost):
        await _write(db, stale, 2)


async def test_a_sqlite_file_of_an_earlier_version_gets_the_new_columns(tmp_path: Path) -> None:
    """SQLite has no ``ADD COLUMN IF NOT EXISTS``: the set-up adds what an older file lacks."""
    import sqlite3

    from stepgraph.server.cluster.litepool import LitePool

    path = str(tmp_path / "old.sqlite")
    raw = sqlite3.connect(path)
    raw.execute(
        "CREATE TABLE sg_run_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE,"
        " thread_id TEXT NOT NULL, status TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 1,"
        " not_before REAL NOT NULL DEFAULT 0, lease_epoch INTEGER NOT NULL DEFAULT 0, lease_owner TEXT,"
        " lease_expires REAL, attempt INTEGER NOT NULL DEFAULT 0, cancel_action TEXT, result TEXT,"
        " progress TEXT, stalls INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL DEFAULT 0)"
    )
    raw.execute(
        "CREATE TABLE sg_run_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL,"
        " name TEXT NOT NULL, data BLOB NOT NULL, created_at REAL NOT NULL DEFAULT 0)"
    )
    raw.commit()
    raw.close()
    pool = LitePool(path, LocalListener())
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        await setup_cluster_schema(pool)  # idempotent
        async with pool.connection() as conn:
            queue_cols = {
                r[1]
                for r in await (await conn.execute("PRAGMA table_info(sg_run_queue)")).fetchall()
            }
            event_cols = {
                r[1]
                for r in await (await conn.execute("PRAGMA table_info(sg_run_events)")).fetchall()
            }
        assert "commits" in queue_cols and "tag" in event_cols
    finally:
        await pool.close()


async def test_a_claim_with_no_run_due_does_not_wait_for_the_write_lock(tmp_path: Path) -> None:
    """A wake-up first reads whether a run is due: with none (a delayed run), the claim's
    transaction is not opened, so a held write lock does not hold the claim loop up."""
    import sqlite3

    from stepgraph.server.cluster.litepool import LitePool

    path = str(tmp_path / "db.sqlite")
    pool = LitePool(path, LocalListener())
    await pool.open()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        await setup_cluster_schema(pool)
        queue = _queue(Db("sqlite", pool, None))
        await _sql(
            Db("sqlite", pool, None),
            "INSERT INTO sg_run_queue (run_id, thread_id, status, not_before)"
            " VALUES ('r1', 't1', 'pending', 1e12)",
        )
        holder.execute("BEGIN IMMEDIATE")
        assert await asyncio.wait_for(queue._claim(), 5) is None
        holder.rollback()
        await _sql(
            Db("sqlite", pool, None), "UPDATE sg_run_queue SET not_before = 0 WHERE run_id = 'r1'"
        )
        assert (await queue._claim() or {}).get("run_id") == "r1"
    finally:
        holder.close()
        await pool.close()
