"""v3 thread event logs shared by every process of a cluster.

A thread's protocol events (``runtime.threadlog``) are numbered by ``seq`` across all the
runs of the thread, and those runs may execute on different workers while the clients
follow from any API process. So each process keeps its usual in-memory ``ThreadLog`` per
thread, and ``SharedThreadLogs`` ties them to one shared log:

- **writing** (a worker's v3 run): each event appended locally is also sent, in order, to
  the shared log (a Redis Stream ``<prefix>thread:<id>`` whose entry ids are ``0-<seq>``,
  or rows of ``sg_thread_events``); before a run writes, the worker catches its local log up
  with the shared one (``prepare``), so its ``seq`` continue where the previous run's
  worker stopped. A ``seq`` already taken is refused by the store (Redis refuses an entry
  id that is not above the last; the table's primary key), so a zombie cannot rewrite
  the log;
- **reading** (a follower, in any process): opening a log starts a tail task that copies
  the shared events the local log lacks into it (same ``seq``, same encoded frame), while
  someone follows it; the route then serves the local log as in a single process.

A log is trimmed to ``max_events`` in the shared store too; a follower asking for events
trimmed away gets the usual gap (410 / comment frame).

Deleting a thread drops its shared log and tells every process (``announce``: ``NOTIFY
sg_gone``); each one ends its followers of the thread (``forget``), the deleting process's
at once. A follower on a process whose ``LISTEN`` connection was down at that moment
(a PostgreSQL restart) is ended by its tail's check that the thread still exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.runtime.threadlog import ThreadEvent, ThreadLog, ThreadLogs

__all__ = ["PgThreadEvents", "RedisThreadEvents", "SharedThreadLog", "SharedThreadLogs"]

logger = logging.getLogger("stepgraph.server")


class ThreadEventStore(ABC):
    """Where the shared thread logs are kept."""

    @abstractmethod
    async def append(self, thread_id: str, events: list[ThreadEvent], keep: int) -> None:
        """Add events (a ``seq`` already present is skipped); keep the last ``keep``."""

    @abstractmethod
    async def read(self, thread_id: str, after: int, count: int, block: float) -> list[ThreadEvent]:
        """Events with ``seq`` above ``after``, waiting up to ``block`` s for some."""

    @abstractmethod
    async def drop(self, thread_id: str) -> None:
        """Forget the thread's log (the thread was deleted)."""


def _event(seq: int, method: str, ns: str, name: str | None, frame: bytes) -> ThreadEvent:
    return ThreadEvent(seq, method, tuple(json.loads(ns)), name or None, frame)


class RedisThreadEvents(ThreadEventStore):
    """Redis Streams with entry ids ``0-<seq>``: Redis itself refuses a ``seq`` not above the last."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, thread_id: str) -> str:
        return f"{self.prefix}thread:{thread_id}"

    async def append(self, thread_id: str, events: list[ThreadEvent], keep: int) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            for e in events:
                pipe.xadd(self.key(thread_id), {"m": e.method, "ns": json.dumps(list(e.namespace)),
                                                "n": e.name or "", "f": e.frame},
                          id=f"0-{e.seq}", maxlen=keep, approximate=True)
            results = await pipe.execute(raise_on_error=False)
        for result in results:
            if isinstance(result, Exception) and "equal or smaller" not in str(result):
                raise result

    async def read(self, thread_id: str, after: int, count: int, block: float) -> list[ThreadEvent]:
        got = await self.client.xread({self.key(thread_id): f"0-{after}"}, count=count,
                                      block=max(1, int(block * 1000)))
        out = []
        for _, entries in got or ():
            for entry_id, f in entries:
                seq = int(entry_id.decode().partition("-")[2])
                out.append(_event(seq, f[b"m"].decode(), f[b"ns"].decode(), f[b"n"].decode(), f[b"f"]))
        return out

    async def drop(self, thread_id: str) -> None:
        await self.client.delete(self.key(thread_id))


class PgThreadEvents(ThreadEventStore):
    """Rows of ``sg_thread_events``; readers wake on ``NOTIFY sg_events`` (payload ``thread:<id>``)."""

    def __init__(self, pool: Any, wait_for: Callable[[str, float], Awaitable[None]]) -> None:
        self.pool = pool
        self._wait_for = wait_for

    async def append(self, thread_id: str, events: list[ThreadEvent], keep: int) -> None:
        async with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO sg_thread_events (thread_id, seq, method, ns, name, frame) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                [(thread_id, e.seq, e.method, json.dumps(list(e.namespace)), e.name, e.frame) for e in events])
            await cur.execute("DELETE FROM sg_thread_events WHERE thread_id = %s AND seq <= %s",
                              (thread_id, events[-1].seq - keep))
            await cur.execute("SELECT pg_notify('sg_events', %s)", (f"thread:{thread_id}",))

    async def _rows(self, thread_id: str, after: int, count: int) -> list[ThreadEvent]:
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(
                "SELECT seq, method, ns, name, frame FROM sg_thread_events WHERE thread_id = %s AND seq > %s"
                " ORDER BY seq LIMIT %s", (thread_id, after, count))).fetchall()
        return [_event(int(s), m, ns, n, bytes(f)) for s, m, ns, n, f in rows]

    async def read(self, thread_id: str, after: int, count: int, block: float) -> list[ThreadEvent]:
        rows = await self._rows(thread_id, after, count)
        if rows:
            return rows
        await self._wait_for(f"thread:{thread_id}", block)
        return await self._rows(thread_id, after, count)

    async def drop(self, thread_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM sg_thread_events WHERE thread_id = %s", (thread_id,))


def _interrupt_id(event: ThreadEvent) -> str | None:
    """The interrupt id an ``input.requested`` event announces (from its encoded frame)."""
    for line in event.frame.split(b"\r\n"):
        if line.startswith(b"data: "):
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                iid = json.loads(line[6:])["params"]["data"].get("interrupt_id")
                return iid if isinstance(iid, str) else None
    return None


@dataclass
class SharedThreadLog(ThreadLog):
    """A process's copy of a shared thread log: what it appends is sent on (``outbox``),
    what other processes appended is copied in (``inject``)."""

    outbox: Callable[[ThreadEvent], None] | None = field(default=None, repr=False)

    def append(self, method: str, namespace: Iterable[str], data: Any, *, event_id: str | None = None,
               name: str | None = None) -> ThreadEvent:
        event = super().append(method, namespace, data, event_id=event_id, name=name)
        if self.outbox is not None:
            self.outbox(event)
        return event

    def inject(self, event: ThreadEvent) -> None:
        """Add an event of the shared log this copy lacks (``seq`` order; older ones skipped)."""
        if event.seq <= self.last_seq:
            return
        if not self.events and event.seq > self.last_seq + 1:
            self.dropped_through = max(self.dropped_through, event.seq - 1)  # trimmed in the store
        self.last_seq = event.seq
        self.events.append(event)
        if event.method == "input.requested":
            iid = _interrupt_id(event)
            if iid is not None:
                self.interrupt_ids.add(iid)
        before = self.nbytes
        self.nbytes += len(event.frame)
        self.touched = time.monotonic()
        self._drop_oldest(self.max_bytes, self.max_events)
        if self.on_resize is not None:
            self.on_resize(self, self.nbytes - before)
        self._wake()


class SharedThreadLogs(ThreadLogs):
    """``ThreadLogs`` of a cluster process (see the module docstring)."""

    log_class = SharedThreadLog

    def __init__(self, store: ThreadEventStore, *, announce: Callable[[str], Awaitable[None]] | None = None,
                 exists: Callable[[str], Awaitable[bool]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self.announce = announce
        """Tells every process that a thread was deleted (they call ``forget``)."""
        self.exists = exists
        """Whether a thread still exists (a tail's check, for a missed announcement)."""
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._outboxes: dict[str, _Outbox] = {}
        self._background: set[asyncio.Task[None]] = set()

    def open(self, thread_id: str) -> ThreadLog:
        log = super().open(thread_id)
        assert isinstance(log, SharedThreadLog)
        if log.outbox is None:
            outbox = self._outboxes.get(thread_id)
            if outbox is None:
                outbox = self._outboxes[thread_id] = _Outbox(self.store, thread_id, self.max_events)
            log.outbox = outbox.push
        if thread_id not in self._tails:
            self._tails[thread_id] = asyncio.get_running_loop().create_task(self._tail(log), name=f"tail-{thread_id}")
        return log

    async def prepare(self, thread_id: str) -> None:
        """Catch the local log up with the shared one before a run of this process writes to it."""
        log = self.open(thread_id)
        assert isinstance(log, SharedThreadLog)
        while True:
            events = await self.store.read(thread_id, log.last_seq, 1000, 0.001)
            for event in events:
                log.inject(event)
            if len(events) < 1000:
                return

    async def _tail(self, log: SharedThreadLog, *, idle_after: float = 10.0, check_every: float = 15.0) -> None:
        """Copy the shared events into ``log`` while someone follows it (or it was just opened)."""
        thread_id = log.thread_id
        quiet_since = checked = time.monotonic()
        try:
            while not log.closed:
                if self.exists is not None and time.monotonic() - checked > check_every:
                    checked = time.monotonic()
                    with contextlib.suppress(Exception):
                        if not await self.exists(thread_id):
                            self.forget(thread_id)
                            return
                try:
                    events = await self.store.read(thread_id, log.last_seq, 500, 1.0)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the store is away: try again
                    logger.warning("reading the shared log of thread %s failed: %s", thread_id, exc)
                    await asyncio.sleep(0.5)
                    continue
                for event in events:
                    log.inject(event)
                if log.followers:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > idle_after:
                    return
        finally:
            if self._tails.get(thread_id) is asyncio.current_task():
                del self._tails[thread_id]

    def forget(self, thread_id: str) -> None:
        """End this process's followers of a thread deleted anywhere (no store change)."""
        super().discard(thread_id)
        tail = self._tails.pop(thread_id, None)
        if tail is not None and tail is not asyncio.current_task():
            tail.cancel()
        self._outboxes.pop(thread_id, None)

    def discard(self, thread_id: str) -> None:
        self.forget(thread_id)
        task = asyncio.get_running_loop().create_task(self._drop(thread_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _drop(self, thread_id: str) -> None:
        try:
            await self.store.drop(thread_id)
        except Exception as exc:  # noqa: BLE001 - the store is away: the log expires with the retention
            logger.warning("dropping the shared log of thread %s failed: %s", thread_id, exc)
        if self.announce is not None:
            try:
                await self.announce(thread_id)
            except Exception as exc:  # noqa: BLE001 - the other processes' tails check the thread
                logger.warning("announcing the delete of thread %s failed: %s", thread_id, exc)

    def close_all(self) -> None:
        for tail in self._tails.values():
            tail.cancel()
        self._tails.clear()
        super().close_all()

    async def drain(self) -> None:
        """Wait for the events still being sent (at shutdown)."""
        tasks = [o.task for o in self._outboxes.values() if o.task is not None and not o.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)


class _Outbox:
    """Sends one thread's new events to the shared store in order, retrying failures."""

    def __init__(self, store: ThreadEventStore, thread_id: str, keep: int, *, give_up: float = 120.0) -> None:
        self.store = store
        self.thread_id = thread_id
        self.keep = keep
        self.give_up = give_up
        self.queue: asyncio.Queue[ThreadEvent] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    def push(self, event: ThreadEvent) -> None:
        self.queue.put_nowait(event)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"thread-out-{self.thread_id}")

    async def _run(self) -> None:
        while not self.queue.empty():
            batch = [self.queue.get_nowait() for _ in range(min(500, self.queue.qsize()))]
            deadline = time.monotonic() + self.give_up
            delay = 0.05
            while True:
                try:
                    await self.store.append(self.thread_id, batch, self.keep)
                    break
                except Exception as exc:  # noqa: BLE001 - the log must never fail the run
                    if time.monotonic() > deadline:
                        logger.error("thread %s: dropping %d protocol event(s): %s", self.thread_id, len(batch), exc)
                        break
                    await asyncio.sleep(delay)
                    delay = min(1.0, delay * 2)
