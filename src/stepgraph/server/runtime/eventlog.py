"""Per-run event logs that SSE readers follow.

A run appends its wire events (``metadata``, ``values``, ``updates|child:...``, ``error``...)
to its own log; any number of readers follow it from the start, from a ``Last-Event-ID``
or from "now". Event ids are ``<epoch-ms>-<seq>`` and strictly increase within a run.

``EventLog`` is the interface (a Redis- or Postgres-backed log can implement it for
several server processes); ``MemoryEventLog`` keeps logs in this process: a finished
run's log stays readable for ``retention`` seconds when the run is resumable, and is
dropped at once otherwise (readers already following it still get every event).
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

__all__ = ["Event", "EventLog", "MemoryEventLog", "RunLog", "parse_event_id"]


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event: its id, name (``mode`` or ``mode|ns...``) and JSON data."""

    key: tuple[int, int]
    name: str
    data: bytes

    @property
    def id(self) -> str:
        return f"{self.key[0]}-{self.key[1]}"

    def frame(self, *, with_id: bool) -> bytes:
        """The event as SSE bytes (CRLF framing)."""
        out = b"event: " + self.name.encode() + b"\r\ndata: " + self.data + b"\r\n"
        if with_id:
            out += b"id: " + self.id.encode() + b"\r\n"
        return out + b"\r\n"

    @property
    def mode(self) -> str:
        """The stream mode the event belongs to (``messages/partial`` -> ``messages``)."""
        return self.name.split("|", 1)[0].split("/", 1)[0]


def parse_event_id(value: str | None) -> tuple[int, int] | None:
    """``"<ms>-<seq>"`` as a sortable key; ``"0"`` or garbage means "before everything"."""
    if not value:
        return None
    head, _, tail = value.strip().partition("-")
    try:
        return (int(head), int(tail) if tail else -1)
    except ValueError:
        return (-1, -1)


@dataclass
class RunLog:
    """The events of one run, in order, with a way to wait for more."""

    run_id: str
    resumable: bool
    events: list[Event] = field(default_factory=list)
    closed: bool = False
    closed_at: float | None = None
    _waiter: asyncio.Future[None] | None = None

    def _next_key(self) -> tuple[int, int]:
        ms = time.time_ns() // 1_000_000
        if self.events:
            last_ms, last_seq = self.events[-1].key
            if ms <= last_ms:
                return (last_ms, last_seq + 1)
        return (ms, 0)

    def append(self, name: str, data: bytes) -> Event:
        """Add an event and wake the readers."""
        event = Event(self._next_key(), name, data)
        self.events.append(event)
        self._wake()
        return event

    def close(self) -> None:
        """No more events: readers finish after the last one."""
        self.closed = True
        self.closed_at = time.monotonic()
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float) -> bool:
        """Wait for an append or the close; ``False`` on timeout."""
        if self._waiter is None or self._waiter.done():
            self._waiter = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter), timeout)
        except TimeoutError:
            return False
        return True

    def start_index(self, after: tuple[int, int] | None, *, live: bool) -> int:
        """Where a reader starts: after the event ``after``, at the end (``live``) or at 0."""
        if after is not None:
            for i, event in enumerate(self.events):
                if event.key > after:
                    return i
            return len(self.events)
        return len(self.events) if live else 0

    async def follow(
        self, *, after: tuple[int, int] | None = None, live: bool = False, heartbeat: float = 5.0,
    ) -> AsyncIterator[Event | None]:
        """Yield events until the log closes; ``None`` after ``heartbeat`` s of silence."""
        index = self.start_index(after, live=live)
        while True:
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.closed:
                return
            if not await self.wait(heartbeat) and index >= len(self.events) and not self.closed:
                yield None


class EventLog(ABC):
    """Where runs write their events and readers find them."""

    @abstractmethod
    def open(self, run_id: str, *, resumable: bool) -> RunLog:
        """Create the log of a new run."""

    @abstractmethod
    def get(self, run_id: str) -> RunLog | None:
        """The log of a run, if it is still kept."""

    @abstractmethod
    def close(self, run_id: str) -> None:
        """Mark a run's log finished."""

    @abstractmethod
    def discard(self, run_id: str) -> None:
        """Forget a run's log."""


class MemoryEventLog(EventLog):
    """Logs in this process's memory."""

    def __init__(self, retention: float = 600.0) -> None:
        self.retention = retention
        self._logs: dict[str, RunLog] = {}

    def open(self, run_id: str, *, resumable: bool) -> RunLog:
        self._prune()
        log = RunLog(run_id, resumable)
        self._logs[run_id] = log
        return log

    def get(self, run_id: str) -> RunLog | None:
        return self._logs.get(run_id)

    def close(self, run_id: str) -> None:
        log = self._logs.get(run_id)
        if log is None:
            return
        log.close()
        if not log.resumable:
            self._logs.pop(run_id, None)

    def discard(self, run_id: str) -> None:
        log = self._logs.pop(run_id, None)
        if log is not None and not log.closed:
            log.close()

    def _prune(self) -> None:
        now = time.monotonic()
        stale = [rid for rid, log in self._logs.items()
                 if log.closed_at is not None and now - log.closed_at > self.retention]
        for rid in stale:
            self._logs.pop(rid, None)
