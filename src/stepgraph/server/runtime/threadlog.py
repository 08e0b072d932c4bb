"""Thread event logs of the v3 streaming protocol (``POST /threads/{id}/stream/events``).

Every run started through ``POST /threads/{id}/commands`` appends its protocol events to
its thread's log; events are numbered by ``seq`` (1, 2, 3 ...) across all the runs of the
thread. Any number of SSE connections follow a log, each with its own ``EventFilter``:
a connection first replays the matching events after ``since`` (all of them without it),
then receives new ones live, and stays open (``None`` heartbeats) until the client leaves.

Events are encoded once, when appended; replays send the same bytes (same ``seq`` and
``event_id``), so clients can de-duplicate across reconnects. Logs live in this process's
memory (as on LangGraph's server; a cluster ties each process's copies to one shared log,
``cluster/threadlogs.py``), bounded: per thread at most ``max_events`` events and
``max_bytes`` bytes (oldest dropped first; clients hydrate old state from
``GET /threads/{id}/state``), all logs together at most ``total_bytes`` (idle logs are
forgotten first, least recently used first, then the oldest events of the least recently
used logs are dropped), and a log nobody follows or writes is forgotten after ``ttl``
seconds, or earlier when more than ``max_threads`` logs exist (least recently used first).
Sizes are the bytes of the encoded frames.

A stream asking for dropped events (``since`` before them) is refused before it starts
(``missed``: the route answers 410). A follower that falls so far behind that the events it
has not read yet are dropped gets a comment frame saying so and its stream ends; the SDK
then reconnects and replays what the log still holds (de-duplicating by ``event_id``).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.serde import dumps

__all__ = ["CHANNELS", "EventFilter", "FilterError", "ThreadEvent", "ThreadLog", "ThreadLogs"]

CHANNELS = ("values", "updates", "messages", "tools", "custom", "lifecycle", "input", "tasks", "checkpoints")
"""The channels a stream may ask for (plus ``custom:<name>``)."""

_CHANNEL_OF = {"input.requested": "input", "input.answered": "input"}


class FilterError(ValueError):
    """An event-stream request that cannot be served (answered HTTP 400)."""


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class ThreadEvent:
    """One protocol event, encoded as its SSE frame."""

    seq: int
    method: str
    namespace: tuple[str, ...]
    name: str | None
    frame: bytes

    @property
    def channel(self) -> str:
        """The channel a stream subscribes to for this event."""
        return _CHANNEL_OF.get(self.method, self.method)


def encode_event(seq: int, event_id: str, method: str, namespace: Sequence[str], timestamp: int,
                 data: Any) -> bytes:
    """The SSE frame of an event: ``event``, ``data`` (the envelope) and ``id: <seq>`` (CRLF)."""
    envelope = {"type": "event", "event_id": event_id, "seq": seq, "method": method,
                "params": {"namespace": list(namespace), "timestamp": timestamp, "data": data}}
    return (b"event: " + method.encode() + b"\r\ndata: " + dumps(envelope) + b"\r\nid: "
            + str(seq).encode() + b"\r\n\r\n")


@dataclass(frozen=True)
class EventFilter:
    """Which events one stream receives: channels, namespace prefixes and depth."""

    channels: frozenset[str]
    custom_names: frozenset[str] = frozenset()
    namespaces: tuple[tuple[str, ...], ...] | None = None
    depth: int | None = None

    @classmethod
    def parse(cls, body: dict[str, Any]) -> EventFilter:
        """The filter of an event-stream request body (``FilterError`` when malformed)."""
        channels = body.get("channels")
        if not isinstance(channels, list) or not channels:
            raise FilterError("channels is required and must be a non-empty array")
        bad = [c for c in channels if not isinstance(c, str)
               or (c not in CHANNELS and not (c.startswith("custom:") and len(c) > 7))]
        if bad:
            raise FilterError(f"channels contains unsupported entries: {', '.join(map(str, bad))}. "
                              f"Allowed: {', '.join(CHANNELS)}, custom:<name>")
        names = frozenset(c[7:] for c in channels if c.startswith("custom:"))
        namespaces = body.get("namespaces")
        if namespaces is not None:
            if not isinstance(namespaces, list) or not all(
                    isinstance(ns, list) and all(isinstance(s, str) for s in ns) for ns in namespaces):
                raise FilterError("namespaces must be an array of string arrays")
            namespaces = tuple(tuple(ns) for ns in namespaces)
        depth = body.get("depth")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
            raise FilterError("depth must be a non-negative integer")
        return cls(frozenset(c for c in channels if c in CHANNELS), names, namespaces, depth)

    def matches(self, event: ThreadEvent) -> bool:
        """Whether ``event`` goes to this stream."""
        channel = event.channel
        if channel not in self.channels and not (channel == "custom" and event.name in self.custom_names):
            return False
        if self.namespaces is None:
            return self.depth is None or len(event.namespace) <= self.depth
        ns = event.namespace
        for prefix in self.namespaces:
            if ns[:len(prefix)] == prefix and (self.depth is None or len(ns) - len(prefix) <= self.depth):
                return True
        return False


@dataclass
class ThreadLog:
    """The protocol events of one thread, in ``seq`` order, with a way to wait for more."""

    thread_id: str
    max_events: int = 10000
    max_bytes: int = 16 * 1024 * 1024
    events: list[ThreadEvent] = field(default_factory=list)
    closed: bool = False
    followers: int = 0
    writers: int = 0
    last_seq: int = 0
    nbytes: int = 0
    touched: float = field(default_factory=time.monotonic)
    interrupt_ids: set[str] = field(default_factory=set)
    """Every interrupt id announced by an ``input.requested`` event of this log."""
    dropped_through: int = 0
    """The ``seq`` of the last event dropped (0: none)."""
    on_resize: Callable[[ThreadLog, int], None] | None = None
    """Told of every change of ``nbytes`` (``ThreadLogs`` keeps the total)."""
    _waiter: asyncio.Future[None] | None = None

    def append(self, method: str, namespace: Iterable[str], data: Any, *, event_id: str | None = None,
               name: str | None = None) -> ThreadEvent:
        """Add an event (numbered, timestamped and encoded here) and wake the followers."""
        ns = tuple(namespace)
        self.last_seq += 1
        seq, ts = self.last_seq, now_ms()
        frame = encode_event(seq, event_id or f"{ts}-{seq}", method, ns, ts, data)
        event = ThreadEvent(seq, method, ns, name, frame)
        self.events.append(event)
        before = self.nbytes
        self.nbytes += len(frame)
        self.touched = time.monotonic()
        self._drop_oldest(self.max_bytes, self.max_events)
        if self.on_resize is not None:
            self.on_resize(self, self.nbytes - before)
        self._wake()
        return event

    def _drop_oldest(self, max_bytes: int, max_events: int | None = None) -> int:
        """Drop the oldest events (never the last one) until the log fits; bytes freed."""
        drop, freed = 0, 0
        while len(self.events) - drop > 1 and (
                (max_events is not None and len(self.events) - drop > max_events)
                or self.nbytes - freed > max_bytes):
            freed += len(self.events[drop].frame)
            drop += 1
        if drop:
            self.dropped_through = self.events[drop - 1].seq
            del self.events[:drop]
            self.nbytes -= freed
        return freed

    def shrink(self, max_bytes: int) -> int:
        """Drop the oldest events until at most ``max_bytes`` remain; bytes freed."""
        freed = self._drop_oldest(max_bytes)
        if freed:
            self._wake()
        return freed

    def missed(self, since: int | None) -> bool:
        """Whether a stream replaying after ``since`` would miss dropped events."""
        return since is not None and since < self.dropped_through

    def gap_frame(self) -> bytes:
        """The comment frame of a follower whose unread events were dropped."""
        return (f": events up to seq {self.dropped_through} of thread {self.thread_id} were dropped from "
                f"the server's buffer before this stream read them; reconnect to replay what is kept "
                f"and read GET /threads/{self.thread_id}/state for the current state\r\n\r\n").encode()

    @property
    def idle(self) -> bool:
        """Nobody follows or writes this log."""
        return not self.followers and not self.writers

    def close(self) -> None:
        """End every follower (the thread was deleted or the server stops)."""
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, timeout: float) -> None:
        if self._waiter is None or self._waiter.done():
            self._waiter = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter), max(timeout, 0.0))
        except TimeoutError:
            pass

    def _index_after(self, seq: int) -> int:
        if not self.events:
            return 0
        return min(max(seq - self.events[0].seq + 1, 0), len(self.events))

    async def follow(self, flt: EventFilter, *, since: int | None = None,
                     heartbeat: float = 5.0) -> AsyncIterator[ThreadEvent | None]:
        """Matching events after ``since`` (all without it), then live ones; ``None`` after
        ``heartbeat`` seconds without sending anything. Ends only when the log is closed."""
        self.followers += 1
        self.touched = time.monotonic()
        try:
            if self.missed(since):
                yield self._gap_event()
                return
            cursor = max(since or 0, self.dropped_through)
            last_sent = time.monotonic()
            while True:
                if cursor < self.dropped_through:
                    yield self._gap_event()
                    return
                index = self._index_after(cursor)
                while index < len(self.events):
                    event = self.events[index]
                    index += 1
                    cursor = event.seq
                    if flt.matches(event):
                        last_sent = time.monotonic()
                        yield event
                        if cursor < self.dropped_through:
                            break  # events were dropped while the reader was away
                        index = self._index_after(cursor)
                if self.closed:
                    return
                idle = time.monotonic() - last_sent
                if idle >= heartbeat:
                    last_sent = time.monotonic()
                    yield None
                    continue
                await self._wait(heartbeat - idle)
        finally:
            self.followers -= 1
            self.touched = time.monotonic()

    def _gap_event(self) -> ThreadEvent:
        return ThreadEvent(self.dropped_through, "gap", (), None, self.gap_frame())


class ThreadLogs:
    """The thread logs of this process (a cluster's ``SharedThreadLogs`` shares them)."""

    log_class: type[ThreadLog] = ThreadLog

    def __init__(self, *, max_threads: int = 1000, max_events: int = 10000, max_bytes: int = 16 * 1024 * 1024,
                 ttl: float = 3600.0, total_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_threads = max_threads
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.total_bytes = total_bytes
        self.ttl = ttl
        self.nbytes = 0
        """Bytes held by all logs."""
        self._logs: OrderedDict[str, ThreadLog] = OrderedDict()

    def _resized(self, log: ThreadLog, delta: int) -> None:
        if self._logs.get(log.thread_id) is not log:
            return  # a forgotten log still written by a finishing run
        self.nbytes += delta
        if self.nbytes > self.total_bytes:
            self._shed(self.total_bytes * 3 // 4, keep=log)

    def _shed(self, target: int, keep: ThreadLog) -> None:
        """Forget idle logs, then drop the oldest events of the least recently used ones."""
        for thread_id, log in list(self._logs.items()):
            if self.nbytes <= target:
                return
            if log.idle and log is not keep:
                self._forget(thread_id)
        for log in list(self._logs.values()):
            if self.nbytes <= target:
                return
            self.nbytes -= log.shrink(max(0, log.nbytes - (self.nbytes - target)))

    def _forget(self, thread_id: str) -> ThreadLog | None:
        log = self._logs.pop(thread_id, None)
        if log is not None:
            self.nbytes -= log.nbytes
            log.on_resize = None
        return log

    def get(self, thread_id: str) -> ThreadLog | None:
        """The thread's log, if there is one."""
        return self._logs.get(thread_id)

    def open(self, thread_id: str) -> ThreadLog:
        """The thread's log, created when missing (marks it recently used)."""
        log = self._logs.get(thread_id)
        if log is None:
            self._prune()
            log = self._logs[thread_id] = self.log_class(thread_id, self.max_events, self.max_bytes,
                                                         on_resize=self._resized)
        else:
            self._logs.move_to_end(thread_id)
            log.touched = time.monotonic()
        return log

    def discard(self, thread_id: str) -> None:
        """Forget a thread's log (its followers end)."""
        log = self._forget(thread_id)
        if log is not None:
            log.close()

    def close_all(self) -> None:
        """End every follower of every log (server shutdown)."""
        for log in self._logs.values():
            log.close()
        self._logs.clear()
        self.nbytes = 0

    def _prune(self) -> None:
        """Forget idle logs older than ``ttl``, then idle ones beyond ``max_threads`` (LRU)."""
        now = time.monotonic()
        idle = [t for t, log in self._logs.items() if log.idle]
        stale = [t for t in idle if now - self._logs[t].touched > self.ttl]
        excess = max(len(self._logs) - len(stale) + 1 - self.max_threads, 0)
        for thread_id in stale + [t for t in idle if t not in stale][:excess]:
            self._forget(thread_id)
