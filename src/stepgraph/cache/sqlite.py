"""``SqliteCache``: a cache in a SQLite file, shared by threads and processes."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from stepgraph.cache.base import BaseCache, FullKey, Namespace

__all__ = ["SqliteCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sg_cache (
    ns TEXT NOT NULL, key TEXT NOT NULL, type TEXT NOT NULL, value BLOB NOT NULL,
    expires_at REAL, PRIMARY KEY (ns, key)) WITHOUT ROWID
"""


class SqliteCache(BaseCache[Any]):
    """A cache table in ``path`` (WAL mode); expired rows are ignored and swept on write."""

    def __init__(self, *, path: str, serde: Any = None) -> None:
        super().__init__(serde=serde)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.execute(_SCHEMA)
        self._lock = threading.Lock()

    @staticmethod
    def _ns(ns: Namespace) -> str:
        return json.dumps(list(ns))

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        now = time.time()
        out: dict[FullKey, Any] = {}
        with self._lock:
            for ns, key in keys:
                row = self._conn.execute(
                    "SELECT type, value FROM sg_cache WHERE ns = ? AND key = ? "
                    "AND (expires_at IS NULL OR expires_at > ?)",
                    (self._ns(ns), key, now),
                ).fetchone()
                if row is not None:
                    out[(ns, key)] = self.serde.loads_typed((row[0], row[1]))
        return out

    def set(self, pairs: Mapping[FullKey, tuple[Any, int | None]]) -> None:
        now = time.time()
        rows = []
        for (ns, key), (value, ttl) in pairs.items():
            typ, blob = self.serde.dumps_typed(value)
            rows.append((self._ns(ns), key, typ, blob, now + ttl if ttl is not None else None))
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO sg_cache (ns, key, type, value, expires_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                self._conn.execute("DELETE FROM sg_cache WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._conn.execute("DELETE FROM sg_cache")
            else:
                self._conn.executemany("DELETE FROM sg_cache WHERE ns = ?", [(self._ns(tuple(n)),) for n in namespaces])
