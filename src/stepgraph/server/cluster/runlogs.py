"""A run's shared event stream as a worker writes it and any process reads it.

- ``Publisher`` forwards one run's events to the ``EventStore`` in order, in batches,
  retrying failures; each event carries its commit tag (``cuts.py``), and ``flushed()``
  lets a commit wait until every event published before it is in the store.
- ``PublishingRunLog`` is the worker's local ``RunLog`` of a run, publishing every event.
- ``StreamReader`` reads a run's stream for ``server.sse`` (the ``RunLog`` surface),
  skipping events of steps that executed but never committed (``cuts.Committed``).
- ``SharedEventLog`` is the ``EventLog`` of a cluster process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.cluster.cuts import Committed
from stepgraph.server.cluster.events import END, EventStore, Item, StaleEpoch
from stepgraph.server.runtime.eventlog import Event, EventLog, RunLog

__all__ = ["Publisher", "PublishingRunLog", "SharedEventLog", "StreamReader"]

logger = logging.getLogger("stepgraph.server")

_STOP = object()
_BATCH = 200


class Publisher:
    """Forwards one run's events to the store in order, in batches, retrying failures."""

    def __init__(self, store: EventStore, run_id: str, *, give_up: float = 120.0, epoch: int | None = None,
                 on_stale: Callable[[int], None] | None = None, tag: Callable[[], str] | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.give_up = give_up
        self.epoch = epoch
        self.on_stale = on_stale
        """Called with the number of events dropped when the store refuses this epoch."""
        self.tag = tag
        """The commit tag of an event published now (``cuts.py``; ``None``: untagged)."""
        self.stale = False
        self.failing = False
        """A write is being retried (the store is away): commits do not wait for it."""
        self._writing = False
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"publish-{run_id}")

    def push(self, name: str, data: bytes) -> None:
        if not self.stale:
            self._queue.put_nowait((name, data, self.tag()) if self.tag is not None else (name, data))

    def finish(self, *, end: bool) -> None:
        """No more events: write the end marker (``end``) or just stop (a lost lease)."""
        self._queue.put_nowait((END, b"{}") if end else _STOP)
        self._queue.put_nowait(_STOP)

    async def flushed(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until every event pushed so far is in the store; at
        once when the store is away, the publisher stopped, or nothing is pending."""
        if self.stale or self.failing or self.task.done() or (self._queue.empty() and not self._writing):
            return
        waiter = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(waiter)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter), timeout)

    async def _run(self) -> None:
        waiters: list[asyncio.Future[None]] = []
        try:
            while True:
                batch = [await self._queue.get()]
                while not self._queue.empty() and len(batch) < 500:
                    batch.append(self._queue.get_nowait())
                items: list[Item] = []
                stop = False
                for entry in batch:
                    if entry is _STOP:
                        stop = True
                        break
                    if isinstance(entry, asyncio.Future):
                        waiters.append(entry)
                    else:
                        items.append(entry)
                if items:
                    self._writing = True
                    try:
                        await self._write(items)
                    except StaleEpoch as exc:
                        self._went_stale(len(items), exc)
                        return
                    finally:
                        self._writing = False
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)
                waiters.clear()
                if stop:
                    return
        finally:
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
            while not self._queue.empty():
                entry = self._queue.get_nowait()
                if isinstance(entry, asyncio.Future) and not entry.done():
                    entry.set_result(None)

    def _went_stale(self, dropped: int, exc: StaleEpoch) -> None:
        self.stale = True
        while not self._queue.empty():
            entry = self._queue.get_nowait()
            if isinstance(entry, asyncio.Future):
                if not entry.done():
                    entry.set_result(None)
            elif entry is not _STOP:
                dropped += 1
        logger.warning("%s; %d event(s) dropped", exc, dropped)
        if self.on_stale is not None:
            self.on_stale(dropped)

    async def _write(self, items: list[Item]) -> None:
        deadline = time.monotonic() + self.give_up
        delay = 0.05
        while True:
            try:
                await self.store.append(self.run_id, items, self.epoch)
                self.failing = False
                return
            except StaleEpoch:
                raise
            except Exception as exc:  # noqa: BLE001 - the stream must never fail the run
                self.failing = True
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
        committed = Committed(await self._cuts())
        while True:
            try:
                events = await self.store.read(self.run_id, after, _BATCH, min(heartbeat, 2.0))
            except Exception as exc:  # noqa: BLE001 - Redis away: wait and retry
                logger.warning("reading the events of run %s failed: %s", self.run_id, exc)
                await asyncio.sleep(0.5)
                events = []
            if committed.needs_refresh(events):  # a takeover since the cuts were read
                committed.cuts = await self._cuts()
            for event in events:
                after = event.key
                if event.name == END:
                    return
                if committed.keep(event):
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

    async def _cuts(self) -> dict[int, int]:
        try:
            return await self.store.cuts(self.run_id)
        except Exception as exc:  # noqa: BLE001 - the store is away: keep everything (at least once)
            logger.warning("reading the cuts of run %s failed: %s", self.run_id, exc)
            return {}

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
             on_stale: Callable[[int], None] | None = None, tag: Callable[[], str] | None = None) -> RunLog:
        """The log of a run executed here; its events are published with lease ``epoch``
        (``on_stale(dropped)`` when the store refuses that epoch) and commit ``tag()``."""
        log = PublishingRunLog(run_id, resumable, self.max_bytes)
        log.publisher = Publisher(self.store, run_id, epoch=epoch, on_stale=on_stale, tag=tag)
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
