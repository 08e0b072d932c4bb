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


@pytest.mark.parametrize("kind", ["redis", "postgres"])
async def test_event_appends_are_fenced_by_the_lease_epoch(pg_url: str, kind: str) -> None:
    from cluster_harness import REDIS_URL

    from stepgraph.server.cluster.events import PgEvents, RedisEvents, StaleEpoch

    if kind == "redis" and unreachable(redis=True):
        pytest.skip(unreachable(redis=True) or "")
    pool = _pool(pg_url)
    await pool.open()
    store: PgEvents | RedisEvents | None = None
    try:
        await setup_cluster_schema(pool)
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_run_queue (run_id, thread_id, status, lease_epoch)"
                               " VALUES ('r1', 't1', 'running', 1)")

        async def no_wait(run_id: str, timeout: float) -> None:
            await asyncio.sleep(0)

        if kind == "redis":
            store = RedisEvents(REDIS_URL, prefix=f"sgu{uuid.uuid4().hex[:8]}:")
        else:
            store = PgEvents(pool, no_wait)
        await store.append("r1", [("metadata", b"{}")])  # admission: no epoch, not fenced
        await store.append("r1", [("values", b"1")], 1)
        async with pool.connection() as conn:  # the lease expires and another worker claims the run
            await conn.execute("UPDATE sg_run_queue SET lease_epoch = 2 WHERE run_id = 'r1'")
        await store.fence("r1", 2)  # what the reaper does (Redis; a no-op for the table)
        with pytest.raises(StaleEpoch):
            await store.append("r1", [("values", b"zombie")], 1)
        await store.append("r1", [("values", b"2")], 2)
        events = await store.read("r1", None, 100, 0.01)
        assert [e.data for e in events] == [b"{}", b"1", b"2"]
        if kind == "postgres":  # back in the queue (reaped): the old holder is refused at once
            async with pool.connection() as conn:
                await conn.execute("UPDATE sg_run_queue SET status = 'pending' WHERE run_id = 'r1'")
            with pytest.raises(StaleEpoch):
                await store.append("r1", [("values", b"late")], 2)
    finally:
        if isinstance(store, RedisEvents):
            await store.client.delete(store.key("r1"), f"{store.prefix}fence:r1")
            await store.close()
        await pool.close()


async def test_a_zombie_publisher_stops_and_reports_what_it_dropped(pg_url: str) -> None:
    from stepgraph.server.cluster.events import PgEvents
    from stepgraph.server.cluster.runlogs import Publisher

    pool = _pool(pg_url)
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_run_queue (run_id, thread_id, status, lease_epoch)"
                               " VALUES ('r1', 't1', 'running', 2)")

        async def no_wait(run_id: str, timeout: float) -> None:
            await asyncio.sleep(0)

        stale: list[int] = []
        pub = Publisher(PgEvents(pool, no_wait), "r1", epoch=1, on_stale=stale.append)
        for i in range(3):
            pub.push("values", str(i).encode())
        pub.finish(end=True)
        await asyncio.wait_for(pub.task, 10)
        assert stale == [4] and pub.stale  # three events and the end marker
        async with pool.connection() as conn:
            rows = await (await conn.execute("SELECT COUNT(*) FROM sg_run_events")).fetchone()
        assert rows == (0,)
    finally:
        await pool.close()


async def test_a_saver_write_cut_by_a_lost_connection_is_replayed(pg_url: str,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    import psycopg

    from stepgraph.checkpoint.base import empty_checkpoint

    pool = _pool(pg_url, size=1)  # one connection: the write gets the one that is cut
    await pool.open()
    try:
        await setup_cluster_schema(pool)
        saver = FencedPostgresSaver(pool)
        await saver.setup()
        async with pool.connection() as conn:
            await conn.execute("INSERT INTO sg_run_queue (run_id, thread_id, status, lease_epoch)"
                               " VALUES ('r1', 't1', 'running', 1)")
            pid = conn.info.backend_pid
        async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))  # what a restart does
        config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
        lease = Lease("r1", "t1", 1, 1)

        async def write() -> None:
            current_lease.set(lease)
            await saver.aput(config, empty_checkpoint(), {"step": 0}, {})

        with caplog.at_level("WARNING", logger="stepgraph.server"):
            await asyncio.get_running_loop().create_task(write())
        assert any("retrying" in r.getMessage() for r in caplog.records)
        assert len([c async for c in saver.alist(config)]) == 1
        assert not lease.lost
    finally:
        await pool.close()


def test_only_connection_failures_count_as_disconnects() -> None:
    import psycopg

    from stepgraph.server.cluster.retry import is_disconnect

    assert is_disconnect(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert not is_disconnect(psycopg.errors.UniqueViolation("duplicate key"))
    assert not is_disconnect(ValueError("x"))


def test_a_shared_thread_log_copy_takes_in_what_other_processes_wrote() -> None:
    from stepgraph.server.cluster.threadlogs import SharedThreadLog

    writer = SharedThreadLog("t")
    sent: list[object] = []
    writer.outbox = sent.append
    writer.append("lifecycle", (), {"event": "running"})
    writer.append("input.requested", (), {"interrupt_id": "i-1", "payload": 1})
    assert len(sent) == 2  # what a process appends goes to the shared log
    reader = SharedThreadLog("t")
    for event in sent:
        reader.inject(event)  # type: ignore[arg-type]
        reader.inject(event)  # type: ignore[arg-type]  # a second copy is skipped
    assert [e.seq for e in reader.events] == [1, 2] and reader.last_seq == 2
    assert reader.interrupt_ids == {"i-1"}  # announced interrupts are known on every process
    later = SharedThreadLog("t")
    later.inject(sent[1])  # type: ignore[arg-type]  # seq 1 was trimmed from the store
    assert later.dropped_through == 1 and later.missed(0)
