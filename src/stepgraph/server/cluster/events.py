"""Run event streams shared by every process: Redis Streams, or a Postgres table.

A worker's run writes its wire events to a local ``RunLog`` (``PublishingRunLog``) that
forwards them, in order, to the shared stream; any API process reads them with a
``StreamReader``. With Redis each run is a Stream ``<prefix>run:<run_id>`` whose entry ids
are the SSE ids (``<ms>-<seq>``, assigned by Redis, strictly increasing), so
``Last-Event-ID`` replay, joins and live delivery are one structure. Without Redis
(Postgres-only mode, and one process on SQLite) events are rows of ``sg_run_events``, their
id ``<seq>-0``, and readers wake on ``NOTIFY sg_events``; the rows of a run are deleted
``retention`` seconds after its end (``prune``, from the reaper). The end of a run's events is an entry named
``__end__``; a stream is kept ``retention`` seconds after it.

Publishing never fails a run: an unreachable Redis delays the events (retried in order)
and drops them after ``give_up`` seconds, the run itself goes on.

Publishing is fenced by the lease epoch like every other write of a run: a worker appends
with its epoch, and the store refuses the batch (``StaleEpoch``) once the run's stream
belongs to a later epoch. With Redis the stream's fence key holds the highest epoch seen
(raised by each new holder's first append, and by the reaper to ``epoch + 1`` as soon as it
takes an expired lease back); in Postgres-only mode the batch is inserted only while the
run's queue row still has that epoch and is not back in the queue. A zombie worker (frozen
past its lease, then resumed) therefore adds nothing to a stream another worker continues:
its publisher stops and its local run is stopped as a lost lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.cluster.schema import NOW
from stepgraph.server.runtime.eventlog import Event, EventLog, RunLog

__all__ = ["PgEvents", "PublishingRunLog", "RedisEvents", "SharedEventLog", "StaleEpoch", "StreamReader"]

logger = logging.getLogger("stepgraph.server")

END = "__end__"
_STOP = object()


class StaleEpoch(RuntimeError):  # noqa: N818 - the name says what happened
    """The run's stream belongs to a later lease epoch: this worker's events are refused."""


class EventStore(ABC):
    """Where the events of runs are kept for every process."""

    @abstractmethod
    async def append(self, run_id: str, items: list[tuple[str, bytes]], epoch: int | None = None) -> None:
        """Append events in order (``END`` as the name ends the stream); with ``epoch``, only
        while the run's stream is not fenced to a later epoch (else ``StaleEpoch``)."""

    async def fence(self, run_id: str, epoch: int) -> None:  # noqa: B027 - optional
        """Refuse appends of epochs below ``epoch`` from now on (the reaper's hint)."""

    @abstractmethod
    async def read(self, run_id: str, after: tuple[int, int] | None, count: int,
                   block: float) -> list[Event]:
        """Events after ``after`` (from the start when ``None``), waiting up to ``block`` s."""

    @abstractmethod
    async def last_key(self, run_id: str) -> tuple[tuple[int, int] | None, bool]:
        """The key of the latest event and whether the stream has ended."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Release connections."""


def _key_of(entry_id: str | bytes) -> tuple[int, int]:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = text.partition("-")
    return (int(ms), int(seq or 0))


_APPEND_LUA = """
if ARGV[1] ~= '' then
  local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
  local mine = tonumber(ARGV[1])
  if cur > mine then return -1 end
  if mine > cur then redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2]) end
end
for i = 3, #ARGV, 2 do redis.call('XADD', KEYS[1], '*', 'n', ARGV[i], 'd', ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
"""One batch of a run's events, appended atomically unless the stream's fence is higher."""

_FENCE_LUA = """
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1
"""


class RedisEvents(EventStore):
    """Redis Streams (redis-py's asyncio client)."""

    def __init__(self, url: str, *, prefix: str = "sg:", retention: float = 3600.0) -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:  # pragma: no cover - the extra is missing
            raise RuntimeError("--redis-url needs redis-py: pip install 'stepgraph[redis]'") from exc
        self.client = aioredis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=5)
        self.prefix = prefix
        self.retention = int(retention)

    def key(self, run_id: str) -> str:
        return f"{self.prefix}run:{run_id}"

    async def append(self, run_id: str, items: list[tuple[str, bytes]], epoch: int | None = None) -> None:
        ttl = self.retention if any(n == END for n, _ in items) else max(self.retention, 86400)
        args: list[Any] = ["" if epoch is None else str(epoch), str(ttl)]
        for name, data in items:
            args += [name, data]
        done = await self.client.eval(_APPEND_LUA, 2, self.key(run_id), f"{self.prefix}fence:{run_id}", *args)
        if int(done) < 0:
            raise StaleEpoch(f"run {run_id}: the events of lease epoch {epoch} were refused (stream fenced)")

    async def fence(self, run_id: str, epoch: int) -> None:
        await self.client.eval(_FENCE_LUA, 1, f"{self.prefix}fence:{run_id}", str(epoch),
                               str(max(self.retention, 86400)))

    async def read(self, run_id: str, after: tuple[int, int] | None, count: int, block: float) -> list[Event]:
        start = "0-0" if after is None else f"{max(after[0], 0)}-{max(after[1], 0)}"
        got = await self.client.xread({self.key(run_id): start}, count=count, block=max(1, int(block * 1000)))
        out: list[Event] = []
        for _, entries in got or ():
            for entry_id, fields in entries:
                out.append(Event(_key_of(entry_id), fields[b"n"].decode(), fields[b"d"]))
        return out

    async def last_key(self, run_id: str) -> tuple[tuple[int, int] | None, bool]:
        got = await self.client.xrevrange(self.key(run_id), count=1)
        if not got:
            return None, False
        entry_id, fields = got[0]
        return _key_of(entry_id), fields.get(b"n") == END.encode()

    async def close(self) -> None:
        await self.client.aclose()


class PgEvents(EventStore):
    """Rows of ``sg_run_events``; readers wake on ``NOTIFY sg_events`` (payload: the run id)."""

    def __init__(self, pool: Any, wait_for: Callable[[str, float], Awaitable[None]]) -> None:
        self.pool = pool
        self._wait_for = wait_for

    async def append(self, run_id: str, items: list[tuple[str, bytes]], epoch: int | None = None) -> None:
        async with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            if epoch is not None:
                await cur.execute("SELECT 1 FROM sg_run_queue WHERE run_id = %s AND lease_epoch = %s"
                                  " AND status <> 'pending' FOR SHARE", (run_id, epoch))
                if await cur.fetchone() is None:
                    raise StaleEpoch(f"run {run_id}: the events of lease epoch {epoch} were refused (lease moved on)")
            await cur.executemany("INSERT INTO sg_run_events (run_id, name, data) VALUES (%s, %s, %s)",
                                  [(run_id, n, d) for n, d in items])
            await cur.execute("SELECT pg_notify('sg_events', %s)", (run_id,))

    async def _rows(self, run_id: str, after: tuple[int, int] | None, count: int) -> list[Event]:
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(
                "SELECT seq, name, data FROM sg_run_events WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                (run_id, after[0] if after else 0, count))).fetchall()
        return [Event((int(seq), 0), name, bytes(data)) for seq, name, data in rows]

    async def read(self, run_id: str, after: tuple[int, int] | None, count: int, block: float) -> list[Event]:
        rows = await self._rows(run_id, after, count)
        if rows:
            return rows
        await self._wait_for(run_id, block)
        return await self._rows(run_id, after, count)

    async def prune(self, retention: float) -> int:
        """Delete the events of runs whose stream ended more than ``retention`` s ago (what
        Redis does with ``EXPIRE``); how many."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "DELETE FROM sg_run_events WHERE run_id IN (SELECT run_id FROM sg_run_events"
                f" WHERE name = '{END}' AND created_at < {NOW} - %s)", (retention,))
            return max(0, cur.rowcount)

    async def last_key(self, run_id: str) -> tuple[tuple[int, int] | None, bool]:
        async with self.pool.connection() as conn:
            row = await (await conn.execute(
                "SELECT seq, name FROM sg_run_events WHERE run_id = %s ORDER BY seq DESC LIMIT 1",
                (run_id,))).fetchone()
        if row is None:
            return None, False
        return (int(row[0]), 0), row[1] == END


class Publisher:
    """Forwards one run's events to the store in order, in batches, retrying failures."""

    def __init__(self, store: EventStore, run_id: str, *, give_up: float = 120.0, epoch: int | None = None,
                 on_stale: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.give_up = give_up
        self.epoch = epoch
        self.on_stale = on_stale
        """Called with the number of events dropped when the store refuses this epoch."""
        self.stale = False
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"publish-{run_id}")

    def push(self, name: str, data: bytes) -> None:
        if not self.stale:
            self._queue.put_nowait((name, data))

    def finish(self, *, end: bool) -> None:
        """No more events: write the end marker (``end``) or just stop (a lost lease)."""
        self._queue.put_nowait((END, b"{}") if end else _STOP)
        self._queue.put_nowait(_STOP)

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < 500:
                batch.append(self._queue.get_nowait())
            stop = _STOP in batch
            items = [b for b in batch if b is not _STOP]
            if stop:
                items = items[: next(i for i, b in enumerate(batch) if b is _STOP)]
            if items:
                try:
                    await self._write(items)
                except StaleEpoch as exc:
                    self._went_stale(len(items), exc)
                    return
            if stop:
                return

    def _went_stale(self, dropped: int, exc: StaleEpoch) -> None:
        self.stale = True
        while not self._queue.empty():
            dropped += self._queue.get_nowait() is not _STOP
        logger.warning("%s; %d event(s) dropped", exc, dropped)
        if self.on_stale is not None:
            self.on_stale(dropped)

    async def _write(self, items: list[tuple[str, bytes]]) -> None:
        deadline = time.monotonic() + self.give_up
        delay = 0.05
        while True:
            try:
                await self.store.append(self.run_id, items, self.epoch)
                return
            except StaleEpoch:
                raise
            except Exception as exc:  # noqa: BLE001 - the stream must never fail the run
                if time.monotonic() > deadline:
                    logger.error("run %s: dropping %d event(s): %s", self.run_id, len(items), exc)
                    return
                await asyncio.sleep(delay)
                delay = min(1.0, delay * 2)


@dataclass
class PublishingRunLog(RunLog):
    """A worker's local log of a run that also publishes every event to the shared store."""

    publisher: Publisher | None = field(default=None, repr=False)

    def append(self, name: str, data: bytes) -> Event:
        event = super().append(name, data)
        if self.publisher is not None:
            self.publisher.push(name, data)
        return event

    def close(self) -> None:
        if not self.closed and self.publisher is not None:
            self.publisher.finish(end=True)
        super().close()

    def abandon(self) -> None:
        """Stop publishing without ending the stream (another worker takes the run over)."""
        if not self.closed and self.publisher is not None:
            self.publisher.finish(end=False)
        RunLog.close(self)


class StreamReader:
    """Reads one run's shared stream; the same surface as ``RunLog`` for ``server.sse``."""

    def __init__(self, store: EventStore, run_id: str, *, resumable: bool,
                 finished: Callable[[], Awaitable[bool]]) -> None:
        self.store = store
        self.run_id = run_id
        self.resumable = resumable
        self._finished = finished

    def missed(self, after: tuple[int, int] | None, *, live: bool = False) -> bool:
        return False

    async def follow(self, *, after: tuple[int, int] | None = None, live: bool = False,
                     heartbeat: float = 5.0) -> AsyncIterator[Event | None]:
        """Events after ``after`` (all without it; from now when ``live``) until the end marker;
        ``None`` after ``heartbeat`` s of silence. Ends when the run finished and its stream
        is gone."""
        if after is None and live:
            after, ended = await self.store.last_key(self.run_id)
            if ended:
                return
        quiet = 0.0
        while True:
            try:
                events = await self.store.read(self.run_id, after, 200, min(heartbeat, 2.0))
            except Exception as exc:  # noqa: BLE001 - Redis away: wait and retry
                logger.warning("reading the events of run %s failed: %s", self.run_id, exc)
                await asyncio.sleep(0.5)
                events = []
            for event in events:
                after = event.key
                if event.name == END:
                    return
                yield event
            if events:
                quiet = 0.0
                continue
            quiet += min(heartbeat, 2.0)
            if await self._finished():
                _, ended = await self._safe_last()
                if ended or not await self._has_more(after):
                    return
            if quiet >= heartbeat:
                quiet = 0.0
                yield None

    async def _safe_last(self) -> tuple[tuple[int, int] | None, bool]:
        with contextlib.suppress(Exception):
            return await self.store.last_key(self.run_id)
        return None, False

    async def _has_more(self, after: tuple[int, int] | None) -> bool:
        with contextlib.suppress(Exception):
            return bool(await self.store.read(self.run_id, after, 1, 0.001))
        return False


class SharedEventLog(EventLog):
    """``EventLog`` of a cluster process: local publishing logs for the runs it executes."""

    def __init__(self, store: EventStore, *, max_bytes: int) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self._logs: dict[str, PublishingRunLog] = {}

    def open(self, run_id: str, *, resumable: bool, epoch: int | None = None,
             on_stale: Callable[[int], None] | None = None) -> RunLog:
        """The log of a run executed here; its events are published with lease ``epoch``
        (``on_stale(dropped)`` when the store refuses that epoch)."""
        log = PublishingRunLog(run_id, resumable, self.max_bytes)
        log.publisher = Publisher(self.store, run_id, epoch=epoch, on_stale=on_stale)
        self._logs[run_id] = log
        return log

    def get(self, run_id: str) -> RunLog | None:
        return None  # readers use ``reader()``: the stream may be written by another process

    def reader(self, run_id: str, *, resumable: bool, finished: Callable[[], Awaitable[bool]]) -> StreamReader:
        return StreamReader(self.store, run_id, resumable=resumable, finished=finished)

    def close(self, run_id: str) -> None:
        log = self._logs.pop(run_id, None)
        if log is not None:
            log.close()

    def abandon(self, run_id: str) -> None:
        log = self._logs.pop(run_id, None)
        if log is not None:
            log.abandon()

    def discard(self, run_id: str) -> None:
        self.close(run_id)

    async def drain(self) -> None:
        """Wait for every publisher (at shutdown)."""
        tasks = [log.publisher.task for log in self._logs.values() if log.publisher is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
