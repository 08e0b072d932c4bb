"""``start_cluster``: the queue, event log, service and executor of a cluster process, or of
the one process of a SQLite file (the same classes; ``dialect`` and ``litepool`` differ)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from stepgraph.server.cluster.admission import ClusterRunService
from stepgraph.server.cluster.events import PgEvents, RedisEvents
from stepgraph.server.cluster.fence import FencedPostgresSaver, FencedSqliteSaver
from stepgraph.server.cluster.litepool import LitePool
from stepgraph.server.cluster.notify import Listener, LocalListener
from stepgraph.server.cluster.pgqueue import ClusterRunQueue
from stepgraph.server.cluster.runlogs import SharedEventLog
from stepgraph.server.cluster.schema import bump_counter, setup_cluster_schema
from stepgraph.server.cluster.threadlogs import PgThreadEvents, RedisThreadEvents, SharedThreadLogs
from stepgraph.server.cluster.worker import ClusterExecutor

if TYPE_CHECKING:
    from stepgraph.server.cluster.options import ClusterOptions
    from stepgraph.server.context import ServerContext

__all__ = ["ClusterParts", "start_cluster"]

logger = logging.getLogger("stepgraph.server")


class ClusterParts:
    """What ``start_cluster`` started, to stop at shutdown."""

    def __init__(
        self,
        listener: Listener,
        events: SharedEventLog,
        queue: ClusterRunQueue,
        thread_logs: SharedThreadLogs,
        pool: LitePool | None = None,
    ) -> None:
        self.listener = listener
        self.events = events
        self.queue = queue
        self.thread_logs = thread_logs
        self.pool = pool
        """The SQLite connections of the cluster code (PostgreSQL's pool is the backend's)."""

    async def stop(self) -> None:
        await self.queue.shutdown()
        await self.events.drain()
        await self.thread_logs.drain()
        await self.listener.stop()
        await self.events.store.close()
        if self.pool is not None:
            await self.pool.close()


async def start_cluster(ctx: ServerContext, opts: ClusterOptions, *, n_jobs: int) -> ClusterParts:
    """Wire ``ctx`` for the cluster code and start the loops: on PostgreSQL (a cluster of any
    size), or on the backend's SQLite file (one process: ``stepgraph dev``, ``serve``)."""
    backend = ctx.backend
    lite: LitePool | None = None
    if backend.name == "postgres":
        pool: Any = backend.docs.pool  # type: ignore[attr-defined]
        await setup_cluster_schema(pool)
        saver: Any = FencedPostgresSaver(pool)
        await saver.setup()
        listener: Listener = Listener(pool.conninfo)
    elif backend.name == "sqlite" and backend.location != ":memory:":
        if opts.redis_url or opts.role != "all":
            raise ValueError(
                "a cluster of several processes needs PostgreSQL: pass --database-url postgresql://..."
            )
        listener = LocalListener()
        pool = lite = LitePool(backend.location, listener, size=min(16, n_jobs + 4))
        await lite.open()
        await setup_cluster_schema(pool)
        old = backend.saver
        saver = FencedSqliteSaver(old.conn)  # type: ignore[attr-defined]
        saver.on_refused = lambda: bump_counter(pool, "stale_writes_refused")
        await saver.setup()
        await asyncio.to_thread(saver.run_inline, lite.checkpointer.committed)
        old.lock = saver.lock  # type: ignore[attr-defined]  # one connection, one lock
    else:
        raise ValueError("the run queue needs PostgreSQL or a SQLite file (not ':memory:')")
    backend.saver = saver
    listener.start()
    if opts.redis_url:
        store: Any = RedisEvents(
            opts.redis_url, prefix=opts.prefix, retention=opts.stream_retention
        )
        thread_store: Any = RedisThreadEvents(store.client, opts.prefix)
    else:
        store = PgEvents(pool, lambda run_id, timeout: listener.wait("sg_events", run_id, timeout))
        thread_store = PgThreadEvents(
            pool, lambda key, timeout: listener.wait("sg_events", key, timeout)
        )
    events = SharedEventLog(store, max_bytes=ctx.limits.run_log_bytes)
    ctx.events = events

    async def announce(thread_id: str) -> None:  # SQLite: the in-process listener, at once
        async with pool.connection() as conn:
            await conn.execute("SELECT pg_notify('sg_gone', %s)", (thread_id,))

    async def exists(thread_id: str) -> bool:
        return await ctx.threads.find(thread_id) is not None

    ctx.thread_logs = SharedThreadLogs(
        thread_store,
        announce=announce,
        exists=exists,
        max_bytes=ctx.limits.thread_log_bytes,
        total_bytes=ctx.limits.thread_logs_bytes,
    )
    listener.on("sg_gone", ctx.thread_logs.forget)
    executor = ClusterExecutor(ctx, pool)
    queue = ClusterRunQueue(ctx, pool, listener, opts, executor, n_jobs=n_jobs)
    queue.starter = executor.start

    async def fence_events(run_id: str, lost_epoch: int) -> None:
        try:  # best effort: the next holder's first append raises the fence too
            await store.fence(run_id, lost_epoch + 1)
        except Exception as exc:  # noqa: BLE001 - Redis away
            logger.warning("run %s: its event stream could not be fenced: %s", run_id, exc)

    queue.on_reaped = fence_events
    if isinstance(store, PgEvents):
        queue.on_pass = lambda: store.prune(opts.stream_retention)
    ctx.queue = queue
    ctx.service = ClusterRunService(ctx, pool, listener, pg_events=not opts.redis_url)
    queue.start()
    logger.info(
        "cluster role %s: lease %.1f s, heartbeat %.1f s, reaper %.1f s, events in %s, %s",
        opts.role,
        opts.lease_ttl,
        opts.heartbeat,
        opts.reaper,
        "Redis" if opts.redis_url else "Postgres",
        f"{n_jobs} job(s)" if opts.executes else "no jobs",
    )
    return ClusterParts(listener, events, queue, ctx.thread_logs, lite)
