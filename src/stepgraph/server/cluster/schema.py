"""The cluster's tables: the run queue (with its leases) and the Postgres-only event table.

``sg_run_queue`` holds one row per run of the cluster: ``status`` is ``pending`` (waiting
to be claimed), ``running`` (claimed: ``lease_owner`` until ``lease_expires``, fenced by
``lease_epoch``) or ``done``. At most one ``running`` row per thread is an invariant of
the database (the partial unique index ``sg_run_queue_one_running``), not a check in
Python. Times are epoch seconds from the database's clock (``clock_timestamp()``), so the
machines of a cluster need not agree on the time for leases. ``commits`` is the highest
commit number the current epoch recorded (``cuts.py``; every fenced write is one), and
``stalls`` how many executions in a row ended without committing anything, read from the
previous epoch's ``commits`` at each claim (``max_attempts`` of them fail the run);
``progress`` is no longer written (kept for databases of earlier versions). ``sg_run_events``
(``tag``: the commit an event belongs to) and ``sg_thread_events`` hold the run streams and
the v3 thread logs in Postgres-only mode (and on SQLite); ``sg_run_cuts`` the takeover cuts.
The same tables exist on SQLite (``dialect.SQLITE_DDL``): one process on a SQLite file runs
the same queue.
"""

from __future__ import annotations

from typing import Any

from stepgraph.server.cluster.dialect import PG_NOW, SQLITE_ADDED_COLUMNS, SQLITE_DDL, dialect_of

__all__ = ["NOW", "setup_cluster_schema"]

NOW = PG_NOW
"""The database's time in epoch seconds (SQL; rendered for SQLite by ``dialect``)."""

_DDL = (
    "CREATE TABLE IF NOT EXISTS sg_run_queue ("
    " run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, status TEXT NOT NULL,"
    " seq BIGSERIAL, priority INT NOT NULL DEFAULT 1, not_before DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " lease_epoch BIGINT NOT NULL DEFAULT 0, lease_owner TEXT, lease_expires DOUBLE PRECISION,"
    " attempt INT NOT NULL DEFAULT 0, cancel_action TEXT, result TEXT,"
    " created_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch from clock_timestamp()))",
    "ALTER TABLE sg_run_queue ADD COLUMN IF NOT EXISTS progress TEXT",
    "ALTER TABLE sg_run_queue ADD COLUMN IF NOT EXISTS stalls INT NOT NULL DEFAULT 0",
    "ALTER TABLE sg_run_queue ADD COLUMN IF NOT EXISTS commits INT NOT NULL DEFAULT 0",
    "CREATE UNIQUE INDEX IF NOT EXISTS sg_run_queue_one_running ON sg_run_queue (thread_id)"
    " WHERE status = 'running'",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_pending ON sg_run_queue (priority, not_before, seq)"
    " WHERE status = 'pending'",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_thread ON sg_run_queue (thread_id, status)",
    "CREATE TABLE IF NOT EXISTS sg_run_events ("
    " seq BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, name TEXT NOT NULL, data BYTEA NOT NULL,"
    " created_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch from clock_timestamp()))",
    "CREATE INDEX IF NOT EXISTS sg_run_events_run ON sg_run_events (run_id, seq)",
    "CREATE INDEX IF NOT EXISTS sg_run_events_end ON sg_run_events (created_at) WHERE name = '__end__'",
    "ALTER TABLE sg_run_events ADD COLUMN IF NOT EXISTS tag TEXT",
    "CREATE TABLE IF NOT EXISTS sg_run_cuts ("
    " run_id TEXT NOT NULL, epoch BIGINT NOT NULL, commits INT NOT NULL, PRIMARY KEY (run_id, epoch))",
    "CREATE TABLE IF NOT EXISTS sg_cluster_counters (name TEXT PRIMARY KEY, n BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sg_thread_events ("
    " thread_id TEXT NOT NULL, seq BIGINT NOT NULL, method TEXT NOT NULL, ns TEXT NOT NULL, name TEXT,"
    " frame BYTEA NOT NULL, PRIMARY KEY (thread_id, seq))",
)


async def setup_cluster_schema(pool: Any) -> None:
    """Create the tables; concurrent start-ups are serialized by a transaction-scoped lock
    (SQLite: the write lock of ``BEGIN IMMEDIATE``)."""
    if dialect_of(pool).name == "sqlite":
        async with pool.connection() as conn, conn.transaction():
            for stmt in SQLITE_DDL:
                await conn.execute(stmt)
            for table, column, decl in SQLITE_ADDED_COLUMNS:
                rows = await (await conn.execute(f"PRAGMA table_info({table})")).fetchall()
                if column not in {row[1] for row in rows}:
                    await conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
        return
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(7362004400)")
        for stmt in _DDL:
            await conn.execute(stmt)


async def bump_counter(pool: Any, name: str, by: int = 1) -> None:
    """Add ``by`` to a cluster-wide counter (e.g. ``stale_writes_refused``)."""
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO sg_cluster_counters (name, n) VALUES (%s, %s)"
            " ON CONFLICT (name) DO UPDATE SET n = sg_cluster_counters.n + excluded.n", (name, by))


async def read_counters(pool: Any) -> dict[str, int]:
    """Every counter."""
    async with pool.connection() as conn:
        rows = await (await conn.execute("SELECT name, n FROM sg_cluster_counters")).fetchall()
    return {name: int(n) for name, n in rows}
