"""SQL text and sans-IO flows of the SQLite and PostgreSQL stores, written once.

Tables ``sg_store`` (one row per item; ``seq`` is the insertion rank) and
``sg_store_vectors`` (one float32 blob per embedded field). A namespace is stored as its
labels joined by ``.`` (labels cannot contain one), so "under ``("a", "b")``" is the range
``prefix = 'a.b' OR 'a.b.' <= prefix < 'a.b/'`` on a bytewise-sorted column. Times are
microseconds since the epoch, computed by the store (``clock``), never by the database.

A flow yields ``Op``s (``stepgraph.checkpoint._flows``) and gets their rows back, so the
same code serves sqlite3, psycopg and psycopg's async connections. Filters, ranking and
namespace matching then run in Python (``_query``), exactly as in ``InMemoryStore``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from stepgraph.checkpoint._flows import Flow, Op, migrate
from stepgraph.checkpoint._sql import SqlSchema
from stepgraph.store._core import BatchPlan
from stepgraph.store._embed import Vector, pack, unpack
from stepgraph.store._query import Record, list_namespaces, literal_prefix, matches, rank
from stepgraph.store.base import GetOp, Result, SearchOp, StoreError

__all__ = ["POSTGRES", "SQLITE", "StoreSQL", "migrate", "run_plan"]

SCAN_CHUNK = 500
"""Rows read per query while a filtered search fills its page."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sg_store (
            seq {seq},
            prefix {text} NOT NULL,
            key {text} NOT NULL,
            value TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL,
            expires_at BIGINT,
            ttl_minutes DOUBLE PRECISION,
            UNIQUE (prefix, key))""",
        "CREATE INDEX IF NOT EXISTS sg_store_prefix_seq ON sg_store (prefix, seq)",
        "CREATE INDEX IF NOT EXISTS sg_store_expires ON sg_store (expires_at) "
        "WHERE expires_at IS NOT NULL",
        """CREATE TABLE IF NOT EXISTS sg_store_vectors (
            prefix {text} NOT NULL,
            key {text} NOT NULL,
            field TEXT NOT NULL,
            embedding {blob} NOT NULL,
            PRIMARY KEY (prefix, key, field))""",
    ),
)
"""Schema versions; migration ``v`` runs once and is recorded in ``sg_store_migrations``."""

_COLS = "prefix, key, value, created_at, updated_at, expires_at, ttl_minutes, seq"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"
_KEY = "prefix = ? AND key = ?"


def encode_ns(namespace: Sequence[str]) -> str:
    """``("a", "b")`` -> ``"a.b"``."""
    return ".".join(namespace)


def decode_ns(prefix: str) -> tuple[str, ...]:
    """``"a.b"`` -> ``("a", "b")``."""
    return tuple(prefix.split(".")) if prefix else ()


def encode_value(value: dict[str, Any]) -> str:
    """``value`` as JSON text; ``StoreError`` SG437 if it is not JSON-serializable."""
    try:
        return json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"A store value is not JSON-serializable: {exc}.",
            code="SG437",
            hint="SQL stores keep values as JSON: use dicts, lists, str, numbers, bools, None",
        ) from exc


def decode_row(row: Sequence[Any]) -> Record:
    """A ``_COLS`` row as a ``Record``."""
    prefix, key, value, created, updated, expires, ttl, seq = row
    return Record(decode_ns(prefix), key, json.loads(value), created, updated, expires, ttl, seq)


class StoreSQL(SqlSchema):
    """Renders the store's SQL for one database."""

    migrations_table = "sg_store_migrations"

    def __init__(
        self, name: str, *, placeholder: str, ddl: dict[str, str], lock_sql: str | None
    ) -> None:
        super().__init__(name, placeholder=placeholder, ddl=ddl, lock_sql=lock_sql,
                         migrations=MIGRATIONS)
        self.select_live = f"SELECT {_COLS} FROM sg_store WHERE {_LIVE}"
        self.select_item = self.q(f"{self.select_live} AND {_KEY}")
        self.select_vectors = "SELECT prefix, key, embedding FROM sg_store_vectors WHERE 1 = 1"
        self.select_prefixes = f"SELECT DISTINCT prefix FROM sg_store WHERE {_LIVE}"
        self.refresh = self.q(f"UPDATE sg_store SET expires_at = ? WHERE {_KEY}")
        self.delete_item = self.q(f"DELETE FROM sg_store WHERE {_KEY}")
        self.delete_expired_item = self.q(
            f"DELETE FROM sg_store WHERE {_KEY} AND expires_at IS NOT NULL AND expires_at <= ?"
        )
        self.delete_vectors = self.q(f"DELETE FROM sg_store_vectors WHERE {_KEY}")
        self.upsert = self.q(
            "INSERT INTO sg_store (prefix, key, value, created_at, updated_at, expires_at, "
            "ttl_minutes) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (prefix, key) DO UPDATE SET "
            "value = excluded.value, updated_at = excluded.updated_at, "
            "expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes"
        )
        self.insert_vectors = self.q(
            "INSERT INTO sg_store_vectors (prefix, key, field, embedding) VALUES (?, ?, ?, ?)"
        )
        self.sweep_vectors = self.q(
            "DELETE FROM sg_store_vectors WHERE EXISTS (SELECT 1 FROM sg_store s WHERE "
            "s.prefix = sg_store_vectors.prefix AND s.key = sg_store_vectors.key "
            "AND s.expires_at <= ?)"
        )
        self.sweep_items = self.q("DELETE FROM sg_store WHERE expires_at <= ? RETURNING seq")

    def newer_schema_error(self, found: int, latest: int) -> Exception:
        return StoreError(
            f"The database has store schema v{found}, newer than this stepgraph knows "
            f"(v{latest}).",
            code="SG438",
            hint="upgrade stepgraph, or point the store at another database",
        )

    def under(self, sql: str, prefix: Sequence[str], *params: Any) -> tuple[str, list[Any]]:
        """``sql`` (ending in a WHERE clause) narrowed to namespaces starting with ``prefix``."""
        if not prefix:
            return self.q(sql), list(params)
        p = encode_ns(prefix)
        sql += " AND (prefix = ? OR (prefix >= ? AND prefix < ?))"
        return self.q(sql), [*params, p, p + ".", p + "/"]


SQLITE = StoreSQL(
    "sqlite",
    placeholder="?",
    ddl={"seq": "INTEGER PRIMARY KEY AUTOINCREMENT", "text": "TEXT", "blob": "BLOB"},
    lock_sql=None,
)
POSTGRES = StoreSQL(
    "postgres",
    placeholder="%s",
    ddl={
        "seq": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "text": 'TEXT COLLATE "C"',
        "blob": "BYTEA",
    },
    lock_sql="SELECT pg_advisory_xact_lock(7362004300)",
)


# --- flows ---------------------------------------------------------------------------------
def _search(d: StoreSQL, op: SearchOp, query: Vector | None, now: int) -> Flow[list]:
    """One page of ``op``: SQL narrows by namespace and liveness, Python does the rest."""
    offset, limit = max(op.offset, 0), max(op.limit, 0)
    if query is None and not op.filter:
        sql, params = d.under(d.select_live, op.namespace_prefix, now)
        rows = yield Op(sql + d.q(" ORDER BY seq LIMIT ? OFFSET ?"), [*params, limit, offset])
        return [(decode_row(row), None) for row in rows]
    if query is None:  # filtered: scan in insertion order until the page is full
        sql, params = d.under(d.select_live, op.namespace_prefix, now)
        sql += d.q(" AND seq > ? ORDER BY seq LIMIT ?")
        hits: list[Record] = []
        after = -1
        while len(hits) < offset + limit:
            rows = yield Op(sql, [*params, after, SCAN_CHUNK])
            hits.extend(r for r in map(decode_row, rows) if matches(r.value, op.filter))
            if len(rows) < SCAN_CHUNK:
                break
            after = rows[-1][7]
        return [(r, None) for r in hits[offset : offset + limit]]
    sql, params = d.under(d.select_live, op.namespace_prefix, now)
    rows = yield Op(sql + " ORDER BY seq", params)
    records = {
        (r.namespace, r.key): r for r in map(decode_row, rows) if matches(r.value, op.filter)
    }
    if records:
        sql, params = d.under(d.select_vectors, op.namespace_prefix)
        for prefix, key, blob in (yield Op(sql, params)):
            record = records.get((decode_ns(prefix), key))
            if record is not None:
                record.vectors.append(unpack(blob))
    return rank(op, records.values(), query)


def _write(d: StoreSQL, plan: BatchPlan) -> Flow[None]:
    """Apply the plan's deduplicated puts and deletes."""
    # Rows are written in key order, so concurrent batches lock them in the same order.
    pairs = sorted(((encode_ns(w.namespace), w.key), w) for w in plan.writes.values())
    keys = [key for key, _ in pairs]
    yield Op(d.delete_vectors, keys, kind="many")
    deletes = [key for key, w in pairs if w.value is None]
    if deletes:
        yield Op(d.delete_item, deletes, kind="many")
    puts = [(key, w) for key, w in pairs if w.value is not None]
    if not puts:
        return
    now = plan.now
    rows = [(*key, encode_value(w.value), now, now, w.expires, w.ttl) for key, w in puts]  # type: ignore[arg-type]
    # An expired row that no sweep has deleted yet is replaced by a brand-new item.
    yield Op(d.delete_expired_item, [(*key, now) for key, _ in puts], kind="many")
    yield Op(d.upsert, rows, kind="many")
    vectors = [(*key, field, pack(vec)) for key, w in puts for field, vec in w.vectors]
    if vectors:
        yield Op(d.insert_vectors, vectors, kind="many")


def run_plan(d: StoreSQL, plan: BatchPlan) -> Flow[list[Result]]:
    """Run a whole batch in one transaction: reads, TTL refreshes, writes, sweep."""
    now = plan.now
    for i, op in plan.reads:
        if isinstance(op, GetOp):
            rows = yield Op(d.select_item, (now, encode_ns(op.namespace), str(op.key)))
            plan.found(i, op, decode_row(rows[0]) if rows else None)
        elif isinstance(op, SearchOp):
            page = yield from _search(d, op, plan.query_vector(op), now)
            plan.ranked(i, op, page)
        else:
            sql, params = d.under(d.select_prefixes, literal_prefix(op), now)
            rows = yield Op(sql, params)
            plan.results[i] = list_namespaces(op, (decode_ns(row[0]) for row in rows))
    if plan.refreshed:
        refreshed = {(encode_ns(r.namespace), r.key): r.expires for r in plan.refreshed}
        rows = [(exp, *key) for key, exp in sorted(refreshed.items())]
        yield Op(d.refresh, rows, kind="many")
    if plan.writes:
        yield from _write(d, plan)
    if plan.sweep:
        yield Op(d.sweep_vectors, (now,), kind="exec")
        plan.swept = len((yield Op(d.sweep_items, (now,))))
    return plan.results
