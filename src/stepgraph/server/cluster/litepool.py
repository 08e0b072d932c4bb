"""``LitePool``: the cluster code's connections on one SQLite file.

It offers the part of psycopg's async pool the cluster code uses (``connection()``,
``conn.execute``, ``conn.cursor()``, ``conn.transaction()``, ``fetchone``/``fetchall``,
``rowcount``) over ``sqlite3``, each statement rendered for SQLite (``dialect.render_sqlite``).

- A statement runs on the event loop when it can complete at once (``liteinline``: the
  connection fails at once on a lock), else in the connection's own thread, waiting for the
  lock up to the busy timeout; a transaction that spans several awaits never waits for a
  thread held by someone waiting for its lock. The connections leave checkpoints of the
  write-ahead log to the pool's ``Checkpointer`` thread.
- ``transaction()`` is ``BEGIN IMMEDIATE`` ... ``COMMIT``: the database's write lock from
  the first statement (other processes and the saver's and documents' connections wait for
  it, up to the busy timeout). The transactions of this process take turns on an asyncio
  lock first, so they queue without polling SQLite's lock.
- ``pg_notify(channel, payload)`` is a SQL function: notifications are handed to the
  in-process ``LocalListener`` after the commit (at once outside a transaction), as
  PostgreSQL delivers them; a rolled-back transaction sends none.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from stepgraph.server.cluster.dialect import SQLITE, render_sqlite
from stepgraph.server.storage.liteinline import Checkpointer, is_busy, prepare_inline, waiting

__all__ = ["LiteConn", "LitePool"]

T = TypeVar("T")


class LiteCursor:
    """The rows of the last statement (psycopg's cursor surface, async)."""

    def __init__(self, conn: LiteConn) -> None:
        self._conn = conn
        self._rows: list[tuple[Any, ...]] = []
        self.rowcount = -1

    async def execute(self, sql: str, params: Any = ()) -> LiteCursor:
        self._rows, self.rowcount = await self._conn._statement(sql, params, many=False)
        return self

    async def executemany(self, sql: str, params: Any) -> None:
        self._rows, self.rowcount = await self._conn._statement(sql, list(params), many=True)

    async def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None

    async def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows, []
        return rows


class LiteConn:
    """One ``sqlite3`` connection with its own thread."""

    def __init__(self, pool: LitePool) -> None:
        self.pool = pool
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sg-lite")
        self._raw: sqlite3.Connection | None = None
        self._notes: list[tuple[str, str]] = []
        self._in_tx = False
        self._pending: Future[Any] | None = None
        """The last call handed to the thread (the next runs after it while it is not done)."""
        self._changes = 0

    async def _call(self, fn: Callable[[], T]) -> T:
        """``fn`` in the connection's thread, waiting for locks up to the busy timeout."""
        raw = self._raw
        call = fn if raw is None else (lambda: waiting(raw, fn))
        future = self._thread.submit(call)
        self._pending = future
        return await asyncio.wrap_future(future)

    async def _run(self, fn: Callable[[], T]) -> T:
        """``fn`` on the calling thread when the database lets it complete at once, else
        (locked, or the connection's thread still busy with a cancelled call) in the thread."""
        if self._pending is None or self._pending.done():
            self._pending = None
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
        return await self._call(fn)

    async def open(self) -> None:
        def connect() -> sqlite3.Connection:
            raw = sqlite3.connect(self.pool.path, check_same_thread=False, isolation_level=None)
            raw.execute("PRAGMA synchronous = NORMAL")
            prepare_inline(raw, checkpoints=False)
            raw.create_function(
                "pg_notify", 2, lambda ch, payload: self._notes.append((ch, payload or ""))
            )
            raw.create_function("set_config", 3, lambda name, value, local: value)
            return raw

        self._raw = await asyncio.get_running_loop().run_in_executor(self._thread, connect)

    async def close(self) -> None:
        if self._raw is not None:
            await self._call(self._raw.close)
        self._thread.shutdown(wait=False)

    async def _statement(
        self, sql: str, params: Any, *, many: bool
    ) -> tuple[list[tuple[Any, ...]], int]:
        raw = self._raw
        assert raw is not None, "connection not open"
        text = render_sqlite(sql)

        def run() -> tuple[list[tuple[Any, ...]], int]:
            cur = raw.executemany(text, params) if many else raw.execute(text, tuple(params or ()))
            try:
                rows = cur.fetchall()
                return rows, cur.rowcount
            finally:
                cur.close()

        # several autocommit rows are not one statement: a busy one would leave the first ones written
        result = await (self._call(run) if many and not self._in_tx else self._run(run))
        if not self._in_tx:
            if raw.total_changes != self._changes:  # an autocommit write
                self._changes = raw.total_changes
                self.pool.checkpointer.committed()
            self._deliver()
        return result

    def _deliver(self) -> None:
        notes, self._notes = self._notes, []
        for channel, payload in notes:
            self.pool.listener.notify(channel, payload)

    # -- psycopg's surface ----------------------------------------------------------------------
    async def execute(self, sql: str, params: Any = ()) -> LiteCursor:
        return await LiteCursor(self).execute(sql, params)

    @contextlib.asynccontextmanager
    async def cursor(self, **_: Any) -> AsyncIterator[LiteCursor]:
        yield LiteCursor(self)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[LiteConn]:
        raw = self._raw
        assert raw is not None, "connection not open"
        if self._in_tx:  # nested: part of the enclosing transaction
            yield self
            return
        async with self.pool.write_lock:
            await self._run(lambda: raw.execute("BEGIN IMMEDIATE"))
            self._in_tx = True
            try:
                yield self
            except BaseException:
                self._notes.clear()
                # the thread runs it after any statement still in flight (cancelled waits)
                done = self._pending = self._thread.submit(self._rollback)
                with contextlib.suppress(BaseException):
                    await asyncio.shield(asyncio.wrap_future(done))
                self._in_tx = False
                raise
            try:
                await self._run(raw.commit)
                self._changes = raw.total_changes
                self.pool.checkpointer.committed()
            except BaseException:
                self._notes.clear()
                done = self._pending = self._thread.submit(self._rollback)
                with contextlib.suppress(BaseException):
                    await asyncio.shield(asyncio.wrap_future(done))
                raise
            finally:
                self._in_tx = False
        self._deliver()

    def _rollback(self) -> None:
        raw = self._raw
        if raw is not None and raw.in_transaction:
            raw.rollback()


class LitePool:
    """Up to ``size`` ``LiteConn`` on ``path``; ``listener`` gets the notifications."""

    dialect = SQLITE

    def __init__(self, path: str, listener: Any, *, size: int = 4) -> None:
        self.path = path
        self.listener = listener
        self.size = size
        self.write_lock = asyncio.Lock()
        # the connection used last is lent first: its page cache is the likeliest to be current
        self._idle: asyncio.Queue[LiteConn] = asyncio.LifoQueue()
        self._all: list[LiteConn] = []
        self.conninfo = f"sqlite:///{path}"
        self.checkpointer = Checkpointer(path)

    async def open(self) -> None:
        for _ in range(self.size):
            conn = LiteConn(self)
            await conn.open()
            self._all.append(conn)
            self._idle.put_nowait(conn)

    async def close(self) -> None:
        for conn in self._all:
            with contextlib.suppress(Exception):
                await conn.close()
        self._all.clear()
        await asyncio.to_thread(self.checkpointer.close)

    @contextlib.asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[LiteConn]:
        conn = await asyncio.wait_for(self._idle.get(), timeout)
        try:
            yield conn
        finally:
            self._idle.put_nowait(conn)
