"""Run event streams shared by every process: Redis Streams, or a Postgres table.

A worker's run writes its wire events to a local ``RunLog`` (``runlogs.PublishingRunLog``)
that forwards them, in order, to the shared stream; any API process reads them with a
``runlogs.StreamReader``. This module holds the two stores. With Redis each run is a Stream ``<prefix>run:<run_id>`` whose entry ids
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

Events of a step that executed but did not commit (the worker died or lost its lease) are
skipped by readers that replay or join later: each event carries a commit tag, and the
next holder writes the previous epoch's cut (``cuts.py``).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from stepgraph.server.cluster.cuts import TaggedEvent
from stepgraph.server.cluster.schema import NOW
from stepgraph.server.runtime.eventlog import Event

__all__ = ["END", "EventStore", "Item", "PgEvents", "RedisEvents", "StaleEpoch"]

logger = logging.getLogger("stepgraph.server")

END = "__end__"


class StaleEpoch(RuntimeError):  # noqa: N818 - the name says what happened
    """The run's stream belongs to a later lease epoch: this worker's events are refused."""


Item = tuple[str, bytes] | tuple[str, bytes, str]
"""An event to append: ``(name, data)`` or ``(name, data, tag)``."""


def _tag(item: Item) -> str:
    return item[2] if len(item) > 2 else ""  # type: ignore[misc]


class EventStore(ABC):
    """Where the events of runs are kept for every process."""

    @abstractmethod
    async def append(self, run_id: str, items: list[Item], epoch: int | None = None) -> None:
        """Append events ``(name, data[, tag])`` in order (``END`` as the name ends the
        stream); with ``epoch``, only while the run's stream is not fenced to a later epoch
        (else ``StaleEpoch``)."""

    @abstractmethod
    async def cut(self, run_id: str, epoch: int, commits: int) -> None:
        """Record that ``epoch`` committed ``commits`` times (a takeover: ``cuts.py``)."""

    @abstractmethod
    async def cuts(self, run_id: str) -> dict[int, int]:
        """The cuts of the run's epochs taken over so far."""

    async def fence(self, run_id: str, epoch: int) -> None:  # noqa: B027 - optional
        """Refuse appends of epochs below ``epoch`` from now on (the reaper's hint)."""

    @abstractmethod
    async def read(
        self, run_id: str, after: tuple[int, int] | None, count: int, block: float
    ) -> list[Event]:
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
for i = 3, #ARGV, 3 do
  if ARGV[i + 2] == '' then redis.call('XADD', KEYS[1], '*', 'n', ARGV[i], 'd', ARGV[i + 1])
  else redis.call('XADD', KEYS[1], '*', 'n', ARGV[i], 'd', ARGV[i + 1], 't', ARGV[i + 2]) end
end
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
            raise RuntimeError(
                "--redis-url needs redis-py: pip install 'stepgraph[redis]'"
            ) from exc
        self.client = aioredis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=5)
        self.prefix = prefix
        self.retention = int(retention)

    def key(self, run_id: str) -> str:
        return f"{self.prefix}run:{run_id}"

    async def append(self, run_id: str, items: list[Item], epoch: int | None = None) -> None:
        ttl = self.retention if any(i[0] == END for i in items) else max(self.retention, 86400)
        args: list[Any] = ["" if epoch is None else str(epoch), str(ttl)]
        for item in items:
            args += [item[0], item[1], _tag(item)]
        done = await self.client.eval(
            _APPEND_LUA, 2, self.key(run_id), f"{self.prefix}fence:{run_id}", *args
        )
        if int(done) < 0:
            raise StaleEpoch(
                f"run {run_id}: the events of lease epoch {epoch} were refused (stream fenced)"
            )

    async def fence(self, run_id: str, epoch: int) -> None:
        await self.client.eval(
            _FENCE_LUA,
            1,
            f"{self.prefix}fence:{run_id}",
            str(epoch),
            str(max(self.retention, 86400)),
        )

    async def cut(self, run_id: str, epoch: int, commits: int) -> None:
        key = f"{self.prefix}cut:{run_id}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(key, str(epoch), str(commits))
            pipe.expire(key, max(self.retention, 86400))
            await pipe.execute()

    async def cuts(self, run_id: str) -> dict[int, int]:
        got = await self.client.hgetall(f"{self.prefix}cut:{run_id}")
        return {int(k): int(v) for k, v in got.items()}

    async def read(
        self, run_id: str, after: tuple[int, int] | None, count: int, block: float
    ) -> list[Event]:
        start = "0-0" if after is None else f"{max(after[0], 0)}-{max(after[1], 0)}"
        got = await self.client.xread(
            {self.key(run_id): start}, count=count, block=max(1, int(block * 1000))
        )
        out: list[Event] = []
        for _, entries in got or ():
            for entry_id, fields in entries:
                tag = fields.get(b"t")
                out.append(
                    TaggedEvent(
                        _key_of(entry_id),
                        fields[b"n"].decode(),
                        fields[b"d"],
                        tag.decode() if tag else None,
                    )
                )
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

    async def append(self, run_id: str, items: list[Item], epoch: int | None = None) -> None:
        async with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            if epoch is not None:  # the fence and the wake-up of readers (sent at commit) in one
                await cur.execute(
                    "SELECT pg_notify('sg_events', %s) FROM sg_run_queue WHERE run_id = %s"
                    " AND lease_epoch = %s AND status <> 'pending' FOR SHARE",
                    (run_id, run_id, epoch),
                )
                if await cur.fetchone() is None:
                    raise StaleEpoch(
                        f"run {run_id}: the events of lease epoch {epoch} were refused (lease moved on)"
                    )
            else:
                await cur.execute("SELECT pg_notify('sg_events', %s)", (run_id,))
            await cur.executemany(
                "INSERT INTO sg_run_events (run_id, name, data, tag) VALUES (%s, %s, %s, %s)",
                [(run_id, i[0], i[1], _tag(i) or None) for i in items],
            )

    async def cut(self, run_id: str, epoch: int, commits: int) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO sg_run_cuts (run_id, epoch, commits) VALUES (%s, %s, %s)"
                " ON CONFLICT (run_id, epoch) DO UPDATE SET commits = excluded.commits",
                (run_id, epoch, commits),
            )

    async def cuts(self, run_id: str) -> dict[int, int]:
        async with self.pool.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT epoch, commits FROM sg_run_cuts WHERE run_id = %s", (run_id,)
                )
            ).fetchall()
        return {int(e): int(c) for e, c in rows}

    async def _rows(self, run_id: str, after: tuple[int, int] | None, count: int) -> list[Event]:
        async with self.pool.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT seq, name, data, tag FROM sg_run_events WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                    (run_id, after[0] if after else 0, count),
                )
            ).fetchall()
        return [TaggedEvent((int(seq), 0), name, bytes(data), tag) for seq, name, data, tag in rows]

    async def read(
        self, run_id: str, after: tuple[int, int] | None, count: int, block: float
    ) -> list[Event]:
        rows = await self._rows(run_id, after, count)
        if rows:
            return rows
        await self._wait_for(run_id, block)
        return await self._rows(run_id, after, count)

    async def prune(self, retention: float) -> int:
        """Delete the events of runs whose stream ended more than ``retention`` s ago (what
        Redis does with ``EXPIRE``), with their cuts; how many events."""
        ended = f"SELECT run_id FROM sg_run_events WHERE name = '{END}' AND created_at < {NOW} - %s"
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(f"DELETE FROM sg_run_cuts WHERE run_id IN ({ended})", (retention,))
            cur = await conn.execute(
                f"DELETE FROM sg_run_events WHERE run_id IN ({ended})", (retention,)
            )
            return max(0, cur.rowcount)

    async def last_key(self, run_id: str) -> tuple[tuple[int, int] | None, bool]:
        async with self.pool.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT seq, name FROM sg_run_events WHERE run_id = %s ORDER BY seq DESC LIMIT 1",
                    (run_id,),
                )
            ).fetchone()
        if row is None:
            return None, False
        return (int(row[0]), 0), row[1] == END
