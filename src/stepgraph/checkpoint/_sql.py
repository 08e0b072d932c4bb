"""SQL text for the SQLite and PostgreSQL savers, written once.

Statements use ``?`` placeholders; DDL uses ``{blob}`` (binary type), ``{key}`` (a text type
that sorts bytewise: versions and checkpoint ids are compared with ``<``) and ``{rowid}``
(SQLite tables keyed by their primary key only). A ``Dialect`` renders them for its database. Table names carry an ``sg_`` prefix so that stepgraph never
reads or migrates LangGraph's own ``checkpoints`` tables in a shared database.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from stepgraph.checkpoint._codec import ListQuery
from stepgraph.checkpoint.base import SaverError

__all__ = ["POSTGRES", "SQLITE", "Dialect"]

_DATA_TABLES = ("sg_checkpoints", "sg_checkpoint_blobs", "sg_checkpoint_writes",
                "sg_checkpoint_pieces")  # fmt: skip
THREAD_KEY_AFTER = 10
"""Thread ids longer than this (or starting with ``#``) are stored as a key ``#<n>``."""
_LONG = f"(length(thread_id) > {THREAD_KEY_AFTER} OR substr(thread_id, 1, 1) = '#')"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sg_checkpoints (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id {key} NOT NULL,
            parent_checkpoint_id {key},
            type TEXT NOT NULL,
            checkpoint {blob} NOT NULL,
            metadata_type TEXT NOT NULL,
            metadata {blob} NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)){rowid}""",
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_blobs (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            channel TEXT NOT NULL,
            version {key} NOT NULL,
            type TEXT NOT NULL,
            blob {blob},
            base_version {key},
            anchor {key} NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version)){rowid}""",
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_writes (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT NOT NULL,
            blob {blob} NOT NULL,
            task_path TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)){rowid}""",
    ),
    (  # v1: diff rows and content-addressed pieces (see ``_compact``)
        "ALTER TABLE sg_checkpoints ADD COLUMN kind INTEGER NOT NULL DEFAULT 0",
        # A table in insertion order plus an index: rows keyed by a random digest would
        # leave SQLite's pages a third empty.
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_pieces (
            thread_id TEXT NOT NULL,
            digest {blob} NOT NULL,
            data {blob} NOT NULL)""",
        """CREATE UNIQUE INDEX IF NOT EXISTS sg_checkpoint_pieces_digest
            ON sg_checkpoint_pieces (thread_id, digest)""",
    ),
    (  # v2: long thread ids are stored as a short key ("#" + number) in every row
        """CREATE TABLE IF NOT EXISTS sg_threads (
            thread_key {serial},
            thread_id TEXT NOT NULL UNIQUE)""",
        "INSERT INTO sg_threads (thread_id) SELECT thread_id FROM ("
        + " UNION ".join(f"SELECT thread_id FROM {t}" for t in _DATA_TABLES)
        + f") ids WHERE {_LONG} ORDER BY thread_id",
        *(
            f"UPDATE {t} SET thread_id = '#' || (SELECT k.thread_key FROM sg_threads k "
            f"WHERE k.thread_id = {t}.thread_id) WHERE {_LONG.replace('thread_id', f'{t}.thread_id')}"
            for t in _DATA_TABLES
        ),
    ),
)
"""Schema versions; migration ``v`` runs once and is recorded in ``sg_checkpoint_migrations``."""

CHAIN_HOPS = 32
"""Parents a chain query follows at most (diff chains are at most 16 rows)."""
_CHECKPOINT_COLS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "type, checkpoint, metadata_type, metadata, kind"
)
_BLOB_COLS = "thread_id, checkpoint_ns, channel, version, type, blob, base_version, anchor"
_WRITE_COLS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path"
)
_WRITE_KEY = "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
_SAME_CHANNEL = (
    "b.thread_id = w.thread_id AND b.checkpoint_ns = w.checkpoint_ns AND b.channel = w.channel"
)


class SqlSchema:
    """One database's rendering of a versioned schema: placeholders and migrations.

    Shared by the savers (``Dialect``) and the stores (``StoreSQL``); ``migrate`` in
    ``_flows.py`` applies whatever a subclass lists.
    """

    migrations_table = ""
    """Table recording the applied migration versions."""

    def __init__(
        self, name: str, *, placeholder: str, ddl: dict[str, str], lock_sql: str | None,
        migrations: Sequence[Sequence[str]],
    ) -> None:
        self.name = name
        self.placeholder = placeholder
        self.lock_sql = lock_sql
        """Statement that serializes concurrent migrations (SQLite: ``BEGIN IMMEDIATE`` does)."""
        self.migrations = tuple(tuple(s.format(**ddl) for s in m) for m in migrations)
        table = self.migrations_table
        self.create_migrations = f"CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)"
        self.select_migrations = f"SELECT v FROM {table}"
        self.insert_migration = self.q(f"INSERT INTO {table} (v) VALUES (?)")

    def q(self, sql: str) -> str:
        """``sql`` with this dialect's placeholders."""
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def newer_schema_error(self, found: int, latest: int) -> Exception:
        """The error for a database whose schema is newer than this code knows."""
        raise NotImplementedError

    def upgrade_guard(self, version: int) -> str | None:
        """A query that returns rows when migration ``version`` cannot upgrade the data that
        is there (only asked for databases that already have some schema)."""
        return None

    def refused_upgrade_error(self, version: int) -> Exception:
        """The error raised when ``upgrade_guard(version)`` found rows."""
        raise NotImplementedError


class Dialect(SqlSchema):
    """Renders the shared SQL for one database."""

    migrations_table = "sg_checkpoint_migrations"

    def __init__(
        self, name: str, *, placeholder: str, ddl: dict[str, str], lock_sql: str | None
    ) -> None:
        super().__init__(name, placeholder=placeholder, ddl=ddl, lock_sql=lock_sql,
                         migrations=MIGRATIONS)
        self.upsert_checkpoint = self.q(
            f"INSERT INTO sg_checkpoints ({_CHECKPOINT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET "
            "parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type, "
            "checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type, "
            "metadata = excluded.metadata, kind = excluded.kind"
        )
        self.insert_thread = self.q(
            "INSERT INTO sg_threads (thread_id) VALUES (?) ON CONFLICT (thread_id) DO NOTHING"
        )
        self.select_thread_key = self.q("SELECT thread_key FROM sg_threads WHERE thread_id = ?")
        self.select_thread_ids = self.q(
            "WITH want(k) AS (" + self._keys_table(1) + ") SELECT t.thread_key, t.thread_id "
            "FROM want w JOIN sg_threads t ON t.thread_key = CAST(w.k AS BIGINT)"
        )
        self.insert_pieces = self.q(
            "INSERT INTO sg_checkpoint_pieces (thread_id, digest, data) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING"
        )
        self.insert_blobs = self.q(
            f"INSERT INTO sg_checkpoint_blobs ({_BLOB_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING"
        )
        self.insert_writes = self.q(
            f"INSERT INTO sg_checkpoint_writes ({_WRITE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING"
        )
        self.upsert_writes = self.q(
            f"INSERT INTO sg_checkpoint_writes ({_WRITE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT ({_WRITE_KEY}) DO UPDATE SET channel = excluded.channel, "
            "type = excluded.type, blob = excluded.blob, task_path = excluded.task_path"
        )
        task_writes = (
            "SELECT 1 FROM sg_checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND checkpoint_id = ? AND task_id = ? AND idx >= 0"
        )
        self.select_task_writes = self.q(f"{task_writes} LIMIT 1")
        # The tasks of a key list (thread, namespace, checkpoint, task) that have a regular
        # write stored: one query for all the tasks of a batch of saves.
        self.select_written_tasks = self.q(
            "WITH want(thread_id, checkpoint_ns, checkpoint_id, task_id) AS ("
            + self._keys_table(4)
            + ") SELECT DISTINCT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id "
            "FROM want k JOIN sg_checkpoint_writes w ON w.thread_id = k.thread_id "
            "AND w.checkpoint_ns = k.checkpoint_ns AND w.checkpoint_id = k.checkpoint_id "
            "AND w.task_id = k.task_id AND w.idx >= 0"
        )
        # PostgreSQL: a task's merged row goes in only when the task has no regular write
        # stored yet, and returns a row when it did (one round trip instead of two). Not on
        # SQLite: an INSERT that reads its own table there runs the SELECT into a temporary
        # table first, slower than the two statements (~7 us against ~4 us a task).
        self.insert_merged_writes: str | None = (
            None
            if name == "sqlite"
            else self.q(
                f"INSERT INTO sg_checkpoint_writes ({_WRITE_COLS}) SELECT ?, ?, ?, ?, ?, ?, ?, "
                f"?, ? WHERE NOT EXISTS ({task_writes}) ON CONFLICT DO NOTHING RETURNING 1"
            )
        )
        select = f"SELECT {_CHECKPOINT_COLS} FROM sg_checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
        self.select_latest = self.q(f"{select} ORDER BY checkpoint_id DESC LIMIT 1")
        self.select_checkpoint = self.q(f"{select} AND checkpoint_id = ?")
        # The wanted versions with every row of their delta chains: a chain's versions lie
        # between its anchor (snapshot) and its head, so one primary-key range scan finds it.
        self.select_blobs = self.q(
            "WITH want(thread_id, checkpoint_ns, channel, version) AS ("
            + self._keys_table(4)
            + "), heads AS (SELECT b.thread_id, b.checkpoint_ns, b.channel, b.anchor, "
            f"MAX(b.version) AS head FROM want w JOIN sg_checkpoint_blobs b ON {_SAME_CHANNEL} "
            "AND b.version = w.version "
            "GROUP BY b.thread_id, b.checkpoint_ns, b.channel, b.anchor) "
            "SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob, "
            f"b.base_version FROM heads w JOIN sg_checkpoint_blobs b ON {_SAME_CHANNEL} "
            "AND b.version >= w.anchor AND b.version <= w.head AND b.anchor = w.anchor"
        )
        # The same for the keys of one thread and namespace (every ``get_tuple``): its rows
        # come without those two columns, a third fewer values for the driver to convert.
        one = "b.thread_id = ? AND b.checkpoint_ns = ? AND b.channel = w.channel"
        self.select_thread_blobs = self.q(
            "WITH want(channel, version) AS ("
            + self._keys_table(2)
            + "), heads AS (SELECT b.channel, b.anchor, MAX(b.version) AS head FROM want w "
            f"JOIN sg_checkpoint_blobs b ON {one} AND b.version = w.version "
            "GROUP BY b.channel, b.anchor) "
            "SELECT b.channel, b.version, b.type, b.blob, b.base_version FROM heads w "
            f"JOIN sg_checkpoint_blobs b ON {one} "
            "AND b.version >= w.anchor AND b.version <= w.head AND b.anchor = w.anchor"
        )
        self.select_writes = self.q(
            "WITH want(thread_id, checkpoint_ns, checkpoint_id) AS ("
            + self._keys_table(3)
            + ") SELECT "
            + ", ".join(f"w.{c.strip()}" for c in _WRITE_COLS.split(","))
            + " FROM want k JOIN sg_checkpoint_writes w ON w.thread_id = k.thread_id "
            "AND w.checkpoint_ns = k.checkpoint_ns AND w.checkpoint_id = k.checkpoint_id"
        )
        # Diff rows with the chains of parents they need, up to each chain's full row. The
        # hop count stops a chain whose rows loop (planted, or changed by hand): stepgraph
        # writes at most 16 rows per chain, and the reader refuses longer ones (SG414).
        cols = ", ".join(f"c.{c.strip()}" for c in _CHECKPOINT_COLS.split(","))
        same = "c.thread_id = {0}.thread_id AND c.checkpoint_ns = {0}.checkpoint_ns"
        self.select_chains = self.q(
            "WITH RECURSIVE want(thread_id, checkpoint_ns, checkpoint_id) AS ("
            + self._keys_table(3)
            + f"), chain AS (SELECT {cols}, 0 AS hops FROM want w JOIN sg_checkpoints c ON "
            + same.format("w")
            + " AND c.checkpoint_id = w.checkpoint_id "
            f"UNION ALL SELECT {cols}, p.hops + 1 FROM chain p JOIN sg_checkpoints c ON "
            + same.format("p")
            + f" AND c.checkpoint_id = p.parent_checkpoint_id WHERE p.kind = 1 "
            f"AND p.hops < {CHAIN_HOPS}) "
            f"SELECT {_CHECKPOINT_COLS} FROM chain"
        )
        self.delete_thread = tuple(
            self.q(f"DELETE FROM {table} WHERE thread_id = ?")
            for table in ("sg_checkpoint_writes", "sg_checkpoint_blobs", "sg_checkpoints",
                          "sg_checkpoint_pieces")
        )

    def newer_schema_error(self, found: int, latest: int) -> Exception:
        return SaverError(
            f"The database has checkpoint schema v{found}, newer than this stepgraph "
            f"knows (v{latest}).",
            code="SG413",
            hint="upgrade stepgraph, or point it at another database",
        )

    def upgrade_guard(self, version: int) -> str | None:
        # Schema v0 came from pre-release builds whose rows v1 cannot rewrite (ids, versions
        # and blobs changed form): refuse them rather than read them wrong.
        return "SELECT 1 FROM sg_checkpoints LIMIT 1" if version == 1 else None

    def refused_upgrade_error(self, version: int) -> Exception:
        return SaverError(
            "The database holds checkpoints in the storage format of a pre-release stepgraph "
            "(schema v0), which this version does not read.",
            code="SG418",
            hint="start a new database file/schema, or keep using the build that wrote it",
        )

    def _keys_table(self, width: int) -> str:
        """A query yielding the rows of a key list passed as parameters (see ``keys``)."""
        if self.name == "sqlite":
            cols = ", ".join(f"json_extract(value, '$[{i}]')" for i in range(width))
            return f"SELECT {cols} FROM json_each(?)"
        return "SELECT * FROM unnest(" + ", ".join(["?::text[]"] * width) + ")"

    def select_pieces(self, count: int) -> str:
        """Pieces of one thread by digest: ``(thread_id, *digests)`` (sqlite) or
        ``(thread_id, [digests])`` (postgres)."""
        head = "SELECT digest, data FROM sg_checkpoint_pieces WHERE thread_id = ? AND digest "
        if self.name == "sqlite":
            return head + "IN (" + ", ".join(["?"] * count) + ")"
        return self.q(head + "= ANY(?)")

    def piece_params(self, thread_id: str, digests: Sequence[bytes]) -> tuple[Any, ...]:
        """Parameters of ``select_pieces(len(digests))``."""
        if self.name == "sqlite":
            return (thread_id, *digests)
        return (thread_id, list(digests))

    def keys(self, rows: Sequence[Sequence[str]], width: int) -> tuple[Any, ...]:
        """Parameters of ``_keys_table(width)`` for ``rows``."""
        if self.name == "sqlite":
            return (json.dumps(rows, separators=(",", ":")),)
        return tuple([row[i] for row in rows] for i in range(width))

    def list_query(self, q: ListQuery) -> tuple[str, list[Any]]:
        """The checkpoint rows ``list`` considers, newest first (filter is applied after)."""
        where: list[str] = []
        params: list[Any] = []
        for clause, value in (
            ("thread_id = ?", q.thread_id),
            ("checkpoint_ns = ?", q.ns),
            ("checkpoint_id = ?", q.checkpoint_id),
            ("checkpoint_id < ?", q.before_id),
        ):
            if value is not None:
                where.append(clause)
                params.append(value)
        sql = f"SELECT {_CHECKPOINT_COLS} FROM sg_checkpoints"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY checkpoint_id DESC"
        if q.limit is not None and not q.filter:
            sql += " LIMIT ?"
            params.append(max(q.limit, 0))
        return self.q(sql), params


SQLITE = Dialect(
    "sqlite",
    placeholder="?",
    ddl={"blob": "BLOB", "key": "TEXT", "rowid": " WITHOUT ROWID",
         "serial": "INTEGER PRIMARY KEY"},  # fmt: skip
    lock_sql=None,
)
POSTGRES = Dialect(
    "postgres",
    placeholder="%s",
    ddl={"blob": "BYTEA", "key": 'TEXT COLLATE "C"', "rowid": "",
         "serial": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},  # fmt: skip
    lock_sql="SELECT pg_advisory_xact_lock(7362004100)",
)
