"""Short SQLite statements on the event loop, the thread only when the database is busy.

A statement on a local SQLite file takes microseconds; handing it to a worker thread and
back costs far more (two thread switches and a wake-up of the loop). The server's SQLite
connections therefore run with ``busy_timeout = 0``: a statement is first tried on the
calling thread, where it either completes at once or fails with ``SQLITE_BUSY`` because
another connection (another thread of this process, or another process) holds the write
lock. Only then is it run again in the connection's thread with the real busy timeout,
so the event loop never waits for a lock. A statement that failed with ``SQLITE_BUSY``
changed nothing, so running it again is safe.

Connections prepared without ``checkpoints`` (the cluster's ``LitePool`` and the fenced
saver) do not checkpoint the write-ahead log themselves (``wal_autocheckpoint = 0``: a
checkpoint writes the database file, which is I/O the loop should not wait for);
``Checkpointer`` does it in a thread of its own every ``every`` commits. The documents store
keeps SQLite's automatic checkpoint (at 1000 pages of log, which the ``Checkpointer`` rarely
lets the log reach), so a file it is used on alone never grows its log without bound.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["BUSY_TIMEOUT_MS", "Checkpointer", "is_busy", "prepare_inline", "waiting"]

T = TypeVar("T")
BUSY_TIMEOUT_MS = 30_000
WAL_SIZE_LIMIT = 1 << 20
"""The write-ahead log is cut back to this size when a connection restarts it (1 MiB)."""
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (and their extended codes)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite refusing a statement because of another connection's lock."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    return "locked" in str(exc) or "busy" in str(exc)


def prepare_inline(conn: sqlite3.Connection, *, checkpoints: bool) -> None:
    """Make ``conn`` fail at once on a lock (``busy_timeout = 0``) and keep the write-ahead log
    small; without ``checkpoints`` its commits leave the log to a ``Checkpointer``."""
    conn.execute("PRAGMA busy_timeout = 0")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    if not checkpoints:
        conn.execute("PRAGMA wal_autocheckpoint = 0")


def waiting(conn: sqlite3.Connection, fn: Callable[[], T], timeout_ms: int = BUSY_TIMEOUT_MS) -> T:
    """``fn()`` with the busy timeout of ``conn`` set to ``timeout_ms`` (in a worker thread)."""
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
    try:
        return fn()
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("PRAGMA busy_timeout = 0")


class Checkpointer:
    """Checkpoints the write-ahead log of ``path`` (``PASSIVE``: never waits for a lock) in a
    thread of its own, once every ``every`` commits noted with ``committed``."""

    def __init__(self, path: str, *, every: int = 100) -> None:
        self.path = path
        self.every = max(1, every)
        self._count = 0
        self._thread: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._running: Future[None] | None = None
        self._lock = threading.Lock()

    def committed(self) -> None:
        self._count += 1
        if self._count < self.every:
            return
        if self._running is not None and not self._running.done():
            return
        self._count = 0
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="sg-walckpt")
        self._running = self._thread.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None
                )
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
