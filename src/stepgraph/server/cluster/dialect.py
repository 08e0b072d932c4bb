"""The cluster's SQL on PostgreSQL and on SQLite: what differs, in one place.

The queue, admission, fencing, event and thread-log code is written once, in PostgreSQL's
SQL (``%s`` placeholders, row locks, ``pg_notify``), and runs on either database:

- **PostgreSQL** runs it as written: claims lock the candidate row ``FOR UPDATE SKIP
  LOCKED``, fences lock the queue row ``FOR SHARE``, ``NOTIFY`` wakes the other processes.
- **SQLite** (``stepgraph dev``, ``serve`` on a SQLite file) runs it through ``LitePool``
  (``litepool.py``), which renders each statement with ``render``: ``?`` placeholders, the
  database clock as ``julianday``, and no row-lock clauses, because every transaction of
  the cluster code is ``BEGIN IMMEDIATE``: it holds the database's write lock from its
  first statement, which serializes writers more strictly than row locks (a claim, a
  reaper pass and a fenced checkpoint write never interleave). ``pg_notify`` is a SQL
  function of the connection that hands the notification to the in-process listener at
  commit, as PostgreSQL delivers them; ``set_config`` (a session setting of the fence) is a
  no-op.

What cannot be rendered is a statement of its own here: the claim (PostgreSQL's takes the
candidate with ``SKIP LOCKED`` in a CTE and ``UPDATE ... FROM``; SQLite's updates the row
a subquery picks, then zeroes the new epoch's ``commits`` apart) and the tables
(``BIGSERIAL``/``BYTEA`` versus ``AUTOINCREMENT``/``BLOB``; both have the partial unique
index "one running run per thread"; ``SQLITE_ADDED_COLUMNS`` for files of older versions).
``GREATEST`` (a commit's number) is rendered as SQLite's scalar ``MAX``.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

__all__ = ["POSTGRES", "SQLITE", "Dialect", "dialect_of", "render_sqlite"]

PG_NOW = "extract(epoch from clock_timestamp())"
"""The database's time in epoch seconds (PostgreSQL)."""
SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
"""The same on SQLite (millisecond precision)."""

_PICK = """
  SELECT {cols} FROM sg_run_queue q
  WHERE q.status = 'pending' AND q.not_before <= {now}
    AND NOT EXISTS (SELECT 1 FROM sg_run_queue r WHERE r.thread_id = q.thread_id AND r.status = 'running')
    AND NOT EXISTS (SELECT 1 FROM sg_run_queue p WHERE p.thread_id = q.thread_id AND p.status = 'pending'
                    AND (p.priority, p.not_before, p.seq) < (q.priority, q.not_before, q.seq))
  ORDER BY q.priority, q.not_before, q.seq
  LIMIT 1"""
"""The head of a thread's line that may start now (no run of its thread running)."""

PG_CLAIM = f"""
WITH cand AS ({_PICK.format(now=PG_NOW, cols="q.run_id, q.commits")} FOR UPDATE OF q SKIP LOCKED)
UPDATE sg_run_queue q SET status = 'running', lease_epoch = q.lease_epoch + 1, attempt = q.attempt + 1,
  lease_owner = %s, lease_expires = {PG_NOW} + %s, commits = 0
FROM cand WHERE q.run_id = cand.run_id
RETURNING q.run_id, q.thread_id, q.lease_epoch, q.attempt, q.cancel_action, cand.commits
"""
"""The claim; the last column is the commits the previous epoch recorded (its cut, ``cuts.py``),
and the new epoch starts counting from 0."""
SQLITE_CLAIM = f"""
UPDATE sg_run_queue SET status = 'running', lease_epoch = lease_epoch + 1, attempt = attempt + 1,
  lease_owner = %s, lease_expires = {PG_NOW} + %s
WHERE run_id = ({_PICK.format(now=PG_NOW, cols="q.run_id")})
RETURNING run_id, thread_id, lease_epoch, attempt, cancel_action, commits
"""
"""Rendered by ``render_sqlite`` like every other statement (the clock, the placeholders).
SQLite's ``RETURNING`` sees the updated row only, so the claim leaves ``commits`` alone (it
returns the previous epoch's) and ``SQLITE_RESET_COMMITS`` zeroes it in the same transaction."""
SQLITE_RESET_COMMITS = "UPDATE sg_run_queue SET commits = 0 WHERE run_id = %s"

SQLITE_DDL = (
    "CREATE TABLE IF NOT EXISTS sg_run_queue ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL,"
    " status TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 1, not_before REAL NOT NULL DEFAULT 0,"
    " lease_epoch INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_expires REAL,"
    " attempt INTEGER NOT NULL DEFAULT 0, cancel_action TEXT, result TEXT, progress TEXT,"
    " stalls INTEGER NOT NULL DEFAULT 0, commits INTEGER NOT NULL DEFAULT 0,"
    f" created_at REAL NOT NULL DEFAULT ({SQLITE_NOW}))",
    "CREATE UNIQUE INDEX IF NOT EXISTS sg_run_queue_one_running ON sg_run_queue (thread_id)"
    " WHERE status = 'running'",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_pending ON sg_run_queue (priority, not_before, seq)"
    " WHERE status = 'pending'",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_thread ON sg_run_queue (thread_id, status)",
    "CREATE TABLE IF NOT EXISTS sg_run_events ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL,"
    f" created_at REAL NOT NULL DEFAULT ({SQLITE_NOW}), tag TEXT)",
    "CREATE INDEX IF NOT EXISTS sg_run_events_run ON sg_run_events (run_id, seq)",
    "CREATE INDEX IF NOT EXISTS sg_run_events_end ON sg_run_events (created_at) WHERE name = '__end__'",
    "CREATE TABLE IF NOT EXISTS sg_run_cuts ("
    " run_id TEXT NOT NULL, epoch INTEGER NOT NULL, commits INTEGER NOT NULL, PRIMARY KEY (run_id, epoch))",
    "CREATE TABLE IF NOT EXISTS sg_cluster_counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sg_thread_events ("
    " thread_id TEXT NOT NULL, seq INTEGER NOT NULL, method TEXT NOT NULL, ns TEXT NOT NULL, name TEXT,"
    " frame BLOB NOT NULL, PRIMARY KEY (thread_id, seq))",
)

SQLITE_ADDED_COLUMNS = (
    ("sg_run_queue", "commits", "INTEGER NOT NULL DEFAULT 0"),
    ("sg_run_events", "tag", "TEXT"),
)
"""Columns later than a table's first version: SQLite has no ``ADD COLUMN IF NOT EXISTS``,
so ``setup_cluster_schema`` adds each one a file made by an earlier version lacks."""


@dataclass(frozen=True)
class Dialect:
    """What the cluster code asks of its database, per database."""

    name: str
    claim: str
    """The claim statement (params: owner, lease seconds); returns the run's id, thread, epoch,
    attempt, cancel action and the commits of the previous epoch."""
    after_claim: str | None
    """A statement run after a claim in its transaction (param: the run id), or ``None``."""
    local_owners: bool
    """Every lease holder runs on this machine (one SQLite file): a holder whose process is
    gone can be reaped at once instead of when its lease expires."""

    def unique_errors(self) -> tuple[type[BaseException], ...]:
        """The exceptions of a unique index refusing a row."""
        if self.name == "sqlite":
            return (sqlite3.IntegrityError,)
        import psycopg

        return (psycopg.errors.UniqueViolation,)


POSTGRES = Dialect("postgres", PG_CLAIM, None, local_owners=False)
SQLITE = Dialect("sqlite", SQLITE_CLAIM, SQLITE_RESET_COMMITS, local_owners=True)


def dialect_of(pool: Any) -> Dialect:
    """The dialect of a connection pool (a psycopg pool is PostgreSQL's)."""
    return getattr(pool, "dialect", POSTGRES)  # type: ignore[no-any-return]


_LOCKS = re.compile(r"\s+FOR\s+(?:UPDATE|SHARE)(?:\s+OF\s+\w+)?(?:\s+SKIP\s+LOCKED)?", re.IGNORECASE)


@functools.lru_cache(maxsize=512)
def render_sqlite(sql: str) -> str:
    """A statement of the cluster code for SQLite (see the module docstring)."""
    out = _LOCKS.sub("", sql.replace(PG_NOW, SQLITE_NOW))
    out = out.replace("::text", "").replace("IS DISTINCT FROM", "IS NOT").replace("GREATEST(", "MAX(")
    return out.replace("%s", "?")
