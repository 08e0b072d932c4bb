"""Per-run event logs that SSE readers follow.

A run appends its wire events (``metadata``, ``values``, ``updates|child:...``, ``error``...)
to its own log; any number of readers follow it from the start, from a ``Last-Event-ID``
or from "now". Event ids are ``<epoch-ms>-<seq>`` and strictly increase within a run.

``EventLog`` is the interface (a Redis- or Postgres-backed log can implement it for
several server processes); ``MemoryEventLog`` keeps logs in this process: a finished
run's log stays readable for ``retention`` seconds when the run is resumable, and is
dropped at once otherwise (readers already following it still get every event).

Memory is bounded by the bytes stored (an event costs its encoded name and data plus
``EVENT_OVERHEAD``): one log keeps at most ``max_bytes`` (the oldest events are dropped
first, down to three quarters of it), and the finished logs kept for replay together at
most ``finished_bytes`` (the oldest finished first). A reader that asks for dropped events
(a ``Last-Event-ID`` before them, or a reader that fell behind) gets an ``error`` event
``EventsEvicted`` saying so, and its stream ends: it never waits for events that are gone.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from stepgraph.server.serde import dumps

__all__ = ["EVICTED", "Event", "EventLog", "MemoryEventLog", "RunLog", "parse_event_id"]

EVENT_OVERHEAD = 32
"""Bytes counted per event beyond its name and data (its id and framing)."""
EVICTED = "EventsEvicted"
"""The ``error`` of the event a reader gets when the events it asked for were dropped."""
DEFAULT_LOG_BYTES = 16 << 20
DEFAULT_FINISHED_BYTES = 64 << 20


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
    """The events of one run, in order, with a way to wait for more (at most ``max_bytes``).

    Readers address events by absolute index: ``first`` is the index of ``events[0]``
    (how many were dropped), ``dropped_through`` the key of the last dropped event.
    """

    run_id: str
    resumable: bool
    max_bytes: int = DEFAULT_LOG_BYTES
    events: list[Event] = field(default_factory=list)
    closed: bool = False
    closed_at: float | None = None
    first: int = 0
    nbytes: int = 0
    dropped_through: tuple[int, int] | None = None
    _last_key: tuple[int, int] | None = None
    _waiter: asyncio.Future[None] | None = None

    def _next_key(self) -> tuple[int, int]:
        ms = time.time_ns() // 1_000_000
        if self._last_key is not None:
            last_ms, last_seq = self._last_key
            if ms <= last_ms:
                return (last_ms, last_seq + 1)
        return (ms, 0)

    @staticmethod
    def cost(event: Event) -> int:
        """The bytes ``event`` is counted for."""
        return len(event.name) + len(event.data) + EVENT_OVERHEAD

    def append(self, name: str, data: bytes) -> Event:
        """Add an event and wake the readers (dropping the oldest ones beyond the budget)."""
        event = Event(self._next_key(), name, data)
        self._last_key = event.key
        self.events.append(event)
        self.nbytes += self.cost(event)
        if self.nbytes > self.max_bytes:
            self._trim(self.max_bytes * 3 // 4)
        self._wake()
        return event

    def _trim(self, target: int) -> None:
        drop, freed = 0, 0
        while len(self.events) - drop > 1 and self.nbytes - freed > target:
            freed += self.cost(self.events[drop])
            drop += 1
        if drop:
            self.dropped_through = self.events[drop - 1].key
            del self.events[:drop]
            self.first += drop
            self.nbytes -= freed

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

    def missed(self, after: tuple[int, int] | None, *, live: bool = False) -> bool:
        """Whether a reader starting after ``after`` (at 0 without it, unless ``live``)
        would miss dropped events."""
        if self.dropped_through is None:
            return False
        if after is None:
            return not live
        return after < self.dropped_through

    def start_index(self, after: tuple[int, int] | None, *, live: bool) -> int:
        """Where a reader starts (an absolute index): after the event ``after``, at the end
        (``live``) or at the oldest event kept."""
        if after is not None:
            return self.first + bisect.bisect_right(self.events, after, key=lambda e: e.key)
        return self.first + len(self.events) if live else self.first

    def evicted_event(self) -> Event:
        """The ``error`` event of a reader whose events were dropped."""
        message = (f"Events of run {self.run_id} up to id {self._id(self.dropped_through)} were dropped "
                   f"from the server's stream buffer (its budget is {self.max_bytes} bytes). The run "
                   f"itself is not affected: join it or read the thread's state for its outcome.")
        return Event(self.dropped_through or (0, 0), "error", dumps({"error": EVICTED, "message": message}))

    @staticmethod
    def _id(key: tuple[int, int] | None) -> str:
        return "-" if key is None else f"{key[0]}-{key[1]}"

    async def follow(
        self, *, after: tuple[int, int] | None = None, live: bool = False, heartbeat: float = 5.0,
    ) -> AsyncIterator[Event | None]:
        """Yield events until the log closes; ``None`` after ``heartbeat`` s of silence.

        A reader that asked for, or fell behind to, dropped events gets ``evicted_event()``
        and the iteration ends.
        """
        if self.missed(after, live=live):
            yield self.evicted_event()
            return
        index = self.start_index(after, live=live)
        while True:
            if index < self.first:
                yield self.evicted_event()
                return
            while index - self.first < len(self.events):
                yield self.events[index - self.first]
                index += 1
                if index < self.first:
                    break
            else:
                if self.closed:
                    return
                if not await self.wait(heartbeat) and index - self.first >= len(self.events) \
                        and not self.closed:
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
    """Logs in this process's memory (see the module docstring for the budgets)."""

    def __init__(self, retention: float = 600.0, *, max_bytes: int = DEFAULT_LOG_BYTES,
                 finished_bytes: int = DEFAULT_FINISHED_BYTES) -> None:
        self.retention = retention
        self.max_bytes = max_bytes
        self.finished_bytes = finished_bytes
        self._logs: dict[str, RunLog] = {}
        self._finished: OrderedDict[str, RunLog] = OrderedDict()
        self._finished_nbytes = 0

    @property
    def nbytes(self) -> int:
        """Bytes held by every log kept (running and finished)."""
        return sum(log.nbytes for log in self._logs.values())

    @property
    def finished_nbytes(self) -> int:
        """Bytes held by the finished logs kept for replay."""
        return self._finished_nbytes

    def open(self, run_id: str, *, resumable: bool) -> RunLog:
        self._prune()
        log = RunLog(run_id, resumable, self.max_bytes)
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
            return
        if run_id not in self._finished:
            self._finished[run_id] = log
            self._finished_nbytes += log.nbytes
        while self._finished_nbytes > self.finished_bytes and self._finished:
            self._forget(next(iter(self._finished)))

    def discard(self, run_id: str) -> None:
        log = self._forget(run_id)
        if log is not None and not log.closed:
            log.close()

    def _forget(self, run_id: str) -> RunLog | None:
        log = self._logs.pop(run_id, None)
        kept = self._finished.pop(run_id, None)
        if kept is not None:
            self._finished_nbytes -= kept.nbytes
        return log or kept

    def _prune(self) -> None:
        now = time.monotonic()
        for rid, log in list(self._finished.items()):
            if log.closed_at is None or now - log.closed_at <= self.retention:
                break  # closed in order: the rest are younger
            self._forget(rid)
