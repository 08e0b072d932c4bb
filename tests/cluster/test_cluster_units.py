"""Unit tests of the cluster pieces against the real PostgreSQL (no server processes)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from cluster_harness import PG_BASE, unreachable

from stepgraph.server.cluster.fence import FencedPostgresSaver, Lease, LeaseLost, current_lease
from stepgraph.server.cluster.options import ClusterOptions, pool_size
from stepgraph.server.cluster.schema import setup_cluster_schema


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    reason = unreachable(redis=False)
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"sg_unit_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _pool(url: str, size: int = 4):  # noqa: ANN202
    from psycopg_pool import AsyncConnectionPool

    return AsyncConnectionPool(url, min_size=1, max_size=size, open=False,
                               kwargs={"autocommit": True, "prepare_threshold": 0})


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="role"):
        ClusterOptions(role="boss")
    with pytest.raises(ValueError, match="shorter than the lease"):
        ClusterOptions(lease_ttl=5, heartbeat=5)
    assert pool_size("api", 10) < pool_size("worker", 10) <= 40


def test_environment_sets_lease_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEPGRAPH_LEASE_TTL_S", "4")
    monkeypatch.setenv("STEPGRAPH_HEARTBEAT_S", "1")
    monkeypatch.setenv("STEPGRAPH_REAPER_S", "2")
    opts = ClusterOptions.from_env(role="worker")
    assert (opts.lease_ttl, opts.heartbeat, opts.reaper, opts.executes) == (4.0, 1.0, 2.0, True)
    monkeypatch.setenv("STEPGRAPH_LEASE_TTL_S", "soon")
    with pytest.raises(ValueError, match="STEPGRAPH_LEASE_TTL_S"):
        ClusterOptions.from_env()


def test_cluster_flags_need_postgres(tmp_path) -> None:  # noqa: ANN001
    from stepgraph.server.cli import build_parser, cluster_options
    from stepgraph.server.settings import ConfigError

    args = build_parser().parse_args(["serve", "--role", "api"])
    with pytest.raises(ConfigError, match="PostgreSQL"):
        cluster_options(args)
    args = build_parser().parse_args(["serve"])
    assert cluster_options(args) is None
    args = build_parser().parse_args(["serve", "--role", "worker", "--jobs", "3", "--database-url",
                                      "postgresql://x@h/db", "--lease-ttl", "6", "--heartbeat-interval", "2"])
    opts = cluster_options(args)
    assert opts is not None and (opts.role, opts.lease_ttl, opts.heartbeat, args.n_jobs_per_worker) == \
        ("worker", 6.0, 2.0, 3)


async def test_document_updates_from_two_processes_are_not_lost(pg_url: str) -> None:
    from stepgraph.server.storage.postgres import PostgresDocStore

    pools = [_pool(pg_url), _pool(pg_url)]
    for pool in pools:
        await pool.open()
    try:
        stores = [PostgresDocStore(p) for p in pools]
        await stores[0].setup()
        await stores[0].insert("thread", "t1", {"thread_id": "t1", "n": 0, "metadata": {}})

        def bump(doc: dict) -> None:
            doc["n"] += 1

        await asyncio.gather(*(stores[i % 2].update("thread", "t1", bump) for i in range(40)))
        assert (await stores[1].get("thread", "t1"))["n"] == 40
    finally:
        for pool in pools:
            await pool.close()


async def test_fenced_saver_refuses_writes_of_a_stale_epoch(pg_url: str) -> None:
    from stepgraph.checkpoint.base import empty_checkpoint

    pool = _pool(pg_url)
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        saver = FencedPostgresSaver(pool)
        await saver.setup()
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_run_queue (run_id, thread_id, status, lease_epoch)"
                               " VALUES ('r1', 't1', 'running', 1)")
        config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
        lost: list[str] = []
        lease = Lease("r1", "t1", 1, 1, on_lost=lambda: lost.append("lost"))

        async def write() -> None:
            current_lease.set(lease)
            await saver.aput(config, empty_checkpoint(), {"step": 0}, {})

        await asyncio.get_running_loop().create_task(write())  # the lease holds: accepted
        async with pool.connection() as conn:  # another worker takes the run over
            await conn.execute("UPDATE sg_run_queue SET lease_epoch = 2 WHERE run_id = 'r1'")
        with pytest.raises(LeaseLost):
            await asyncio.get_running_loop().create_task(write())
        assert lost == ["lost"] and lease.refused == 1
        assert len([c async for c in saver.alist(config)]) == 1
        await saver.aput(config, empty_checkpoint(), {"step": 1}, {})  # outside a run: not fenced
        assert len([c async for c in saver.alist(config)]) == 2
    finally:
        await pool.close()


async def test_one_running_run_per_thread_is_a_database_invariant(pg_url: str) -> None:
    import psycopg

    pool = _pool(pg_url)
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_run_queue (run_id, thread_id, status) VALUES"
                               " ('a', 't', 'running'), ('b', 't', 'pending')")
            with pytest.raises(psycopg.errors.UniqueViolation):
                await conn.execute("UPDATE sg_run_queue SET status = 'running' WHERE run_id = 'b'")
    finally:
        await pool.close()
