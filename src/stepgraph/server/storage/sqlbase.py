"""``SqlDocStore``: the records table (``records``) behind SQLite and PostgreSQL alike.

A backend supplies ``_fetch`` / ``_exec`` (and its ``sqlquery`` dialect); the statements
are the same text with the dialect's placeholder. A search runs in two steps: the ids of
the page (filtered, sorted and cut in SQL, reading only small columns), then the page's
documents, so large values of rows that are not returned are never read nor decoded.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from stepgraph.server.storage import records
from stepgraph.server.storage.base import DocStore
from stepgraph.server.storage.filters import AccessFilter, DocQuery
from stepgraph.server.storage.records import COLUMNS, Row
from stepgraph.server.storage.sqlquery import PostgresQuery, SqliteQuery

__all__ = ["TABLE", "SqlDocStore"]

TABLE = "sg_server_records"
LEGACY_TABLE = "sg_server_docs"
"""The table of earlier versions (whole documents in one ``doc`` column): migrated at setup."""
_ALL = ("kind", "id", "thread_id", *COLUMNS, "metadata", "doc", "vals", "large")


class SqlDocStore(DocStore):
    """Documents in the ``sg_server_records`` table."""

    dialect: type[SqliteQuery] | type[PostgresQuery]
    metadata_param = "?"
    """How the ``metadata`` value is written (PostgreSQL casts to ``jsonb``)."""

    @abstractmethod
    async def _fetch(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Rows of a query."""

    @abstractmethod
    async def _exec(self, sql: str, params: list[Any]) -> int:
        """Run a statement; the number of rows it changed."""

    def _metadata_text(self, row: Row) -> str:
        return row.metadata

    def _row_params(self, row: Row) -> list[Any]:
        return [row.kind, row.id, row.thread_id, *row.columns, self._metadata_text(row), row.doc, row.vals, row.large]

    def _insert_sql(self, on_conflict: str) -> str:
        ph = self.dialect.ph
        values = ", ".join(self.metadata_param if c == "metadata" else ph for c in _ALL)
        return f"INSERT INTO {TABLE} ({', '.join(_ALL)}) VALUES ({values}) ON CONFLICT (kind, id) {on_conflict}"

    _UPSERT = "DO UPDATE SET " + ", ".join(
        f"{c} = excluded.{c}" for c in _ALL if c not in ("kind", "id", "thread_id")
    ) + f", thread_id = COALESCE(excluded.thread_id, {TABLE}.thread_id)"

    # -- single documents ------------------------------------------------------------------
    async def get(self, kind: str, doc_id: str, *, access: AccessFilter | None = None,
                  fields: frozenset[str] | None = None) -> dict[str, Any] | None:
        q = self.dialect()
        where = q.where(kind, DocQuery(ids=(doc_id,), access=access))
        rows = await self._fetch(f"SELECT {self._payload(kind, fields)} FROM {TABLE} WHERE {where}", q.params)
        return records.decode_row(*rows[0]) if rows else None

    async def insert(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> bool:
        row = records.encode_row(kind, doc_id, doc, thread_id)
        return await self._exec(self._insert_sql("DO NOTHING"), self._row_params(row)) == 1

    async def put(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> None:
        row = records.encode_row(kind, doc_id, doc, thread_id)
        await self._exec(self._insert_sql(self._UPSERT), self._row_params(row))

    async def swap(self, kind: str, doc_id: str, doc: dict[str, Any], *, column: str,
                   expected: str | None) -> bool:
        row = records.encode_row(kind, doc_id, doc, None)
        ph = self.dialect.ph
        sets = ", ".join(f"{c} = {self.metadata_param if c == 'metadata' else ph}" for c in _ALL[3:])
        cond = f"{column} IS NULL" if expected is None else f"{column} = {ph}"
        params = self._row_params(row)[3:] + [kind, doc_id] + ([] if expected is None else [expected])
        return await self._exec(f"UPDATE {TABLE} SET {sets} WHERE kind = {ph} AND id = {ph} AND {cond}",
                                params) == 1

    async def delete(self, kind: str, doc_id: str) -> bool:
        ph = self.dialect.ph
        return await self._exec(f"DELETE FROM {TABLE} WHERE kind = {ph} AND id = {ph}", [kind, doc_id]) > 0

    async def delete_for_thread(self, kind: str, thread_id: str) -> int:
        ph = self.dialect.ph
        return await self._exec(f"DELETE FROM {TABLE} WHERE kind = {ph} AND thread_id = {ph}", [kind, thread_id])

    # -- searches --------------------------------------------------------------------------
    @staticmethod
    def _payload(kind: str, fields: frozenset[str] | None) -> str:
        vals = "vals" if records.needs_values(fields) else "NULL"
        large = "large" if records.needs_large(kind, fields) else "NULL"
        return f"doc, {vals}, {large}"

    async def query(self, kind: str, q: DocQuery) -> list[dict[str, Any]]:
        sel = self.dialect()
        where = sel.where(kind, q)
        order = sel.order(q, kind)
        ids = [r[0] for r in await self._fetch(
            f"SELECT id FROM {TABLE} WHERE {where} {order} {sel.page(q)}", sel.params)]
        if not ids:
            return []
        fetch = self.dialect()
        where = fetch.where(kind, DocQuery(ids=tuple(ids)))
        rows = await self._fetch(f"SELECT id, {self._payload(kind, q.fields)} FROM {TABLE} WHERE {where}",
                                 fetch.params)
        found = {r[0]: r[1:] for r in rows}
        return [records.decode_row(*found[i]) for i in ids if i in found]

    async def count(self, kind: str, q: DocQuery) -> int:
        sel = self.dialect()
        where = sel.where(kind, q)
        rows = await self._fetch(f"SELECT COUNT(*) FROM {TABLE} WHERE {where}", sel.params)
        return int(rows[0][0])
