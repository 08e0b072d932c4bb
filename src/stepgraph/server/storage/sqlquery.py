"""``DocQuery`` -> SQL for the records table, in SQLite's and PostgreSQL's dialects.

Both dialects give the same answers (the storage tests run one suite on both):

* containment (``metadata`` / ``values`` filters of a search) is PostgreSQL's ``@>``: an
  object pattern matches an object holding each key with a containing value, a list
  pattern matches a list where each pattern item is contained in some element, a scalar
  matches an equal scalar (JSON types: ``true`` is not ``1``; ``1`` equals ``1.0``);
* an access filter (``MetaEq`` / ``MetaContains`` / ``AllOf`` / ``AnyOf``) tests keys of
  ``metadata``.

SQLite walks the JSON with ``json_each`` (keys are bound parameters, never spliced into a
path); PostgreSQL uses ``jsonb`` operators. PostgreSQL's ``jsonb`` cannot hold the NUL
character, so JSON compared there has ``\\u0000`` replaced by ``\\ufffd`` on both sides (the
stored document keeps the real text).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from stepgraph.server.serde import dumps
from stepgraph.server.storage.filters import (
    AccessFilter,
    AllOf,
    AnyOf,
    DocQuery,
    MetaContains,
    MetaEq,
    Scalar,
)
from stepgraph.server.storage.records import SORT_COLUMNS

__all__ = ["PG_NUL", "PostgresQuery", "SqliteQuery", "pg_json"]

PG_NUL = ("\\u0000", "\\ufffd")
"""How JSON text is made acceptable to ``jsonb`` (the escape of NUL -> that of U+FFFD)."""
_INT64 = 2**63


def pg_json(obj: Any) -> str:
    """``obj`` as JSON text that ``jsonb`` accepts."""
    return dumps(obj, stream=False).decode().replace(*PG_NUL)


class _Query:
    """The dialect-independent part: which conditions, in which order."""

    ph = "?"

    def __init__(self) -> None:
        self.params: list[Any] = []
        self._aliases = itertools.count()

    def alias(self) -> str:
        return f"j{next(self._aliases)}"

    def bind(self, value: Any) -> str:
        self.params.append(value)
        return self.ph

    # -- the dialects fill these in ----------------------------------------------------------
    def contains(self, column: str, pattern: Any) -> str:
        raise NotImplementedError

    def meta_eq(self, f: MetaEq) -> str:
        raise NotImplementedError

    def meta_contains(self, f: MetaContains) -> str:
        raise NotImplementedError

    def ids_in(self, ids: tuple[str, ...]) -> str:
        raise NotImplementedError

    def name_contains(self, text: str) -> str:
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------------------
    def access(self, f: AccessFilter) -> str:
        if isinstance(f, MetaEq):
            return self.meta_eq(f)
        if isinstance(f, MetaContains):
            return self.meta_contains(f)
        parts = [self.access(p) for p in f.parts]
        if isinstance(f, AllOf):
            return "(" + " AND ".join(parts) + ")" if parts else "1=1"
        assert isinstance(f, AnyOf)
        return "(" + " OR ".join(parts) + ")" if parts else "1=0"

    def where(self, kind: str, q: DocQuery) -> str:
        """The ``WHERE`` condition of ``q`` (parameters appended to ``self.params``)."""
        conds = [f"kind = {self.bind(kind)}"]
        for column, value in (("thread_id", q.thread_id), ("status", q.status), ("graph_id", q.graph_id)):
            if value is not None:
                conds.append(f"{column} = {self.bind(value)}")
        if q.ids is not None:
            conds.append(self.ids_in(q.ids) if q.ids else "1=0")
        if q.name_contains is not None:
            conds.append(self.name_contains(q.name_contains))
        if q.metadata:
            conds.append(self.contains("metadata", q.metadata))
        if q.values:
            conds.append(self.contains("vals", q.values))
        if q.access is not None:
            conds.append(self.access(q.access))
        return " AND ".join(conds)

    def order(self, q: DocQuery) -> str:
        """``ORDER BY``: documents without the field last (first when descending), then by id."""
        column = SORT_COLUMNS[q.sort_by]
        way = "DESC" if q.descending else "ASC"
        nulls = f"({column} IS NULL) {way}, " if column != "id" else ""
        return f"ORDER BY {nulls}{column} {way}, id {way}"

    def page(self, q: DocQuery) -> str:
        """``LIMIT``/``OFFSET`` of ``q`` (none when unlimited)."""
        if q.limit is None:
            return f"LIMIT -1 OFFSET {self.bind(q.offset)}" if q.offset else ""
        return f"LIMIT {self.bind(q.limit)} OFFSET {self.bind(q.offset)}"


class SqliteQuery(_Query):
    """SQLite (3.38+ JSON functions)."""

    ph = "?"

    def _scalar(self, node: str, typ: str, value: Scalar) -> str:
        if value is None:
            return f"{typ} = 'null'"
        if isinstance(value, bool):
            return f"{typ} = '{'true' if value else 'false'}'"
        if isinstance(value, str):
            return f"({typ} = 'text' AND {node} = {self.bind(value)})"
        if isinstance(value, int) and abs(value) >= _INT64:
            value = float(value)
        return f"({typ} IN ('integer', 'real') AND {node} = {self.bind(value)})"

    def _contains(self, node: str, typ: str, pattern: Any) -> str:
        if isinstance(pattern, dict):
            parts = [f"{typ} = 'object'"]
            for key, sub in pattern.items():
                a = self.alias()
                parts.append(f"EXISTS (SELECT 1 FROM json_each({node}) AS {a} WHERE {a}.key = "
                             f"{self.bind(str(key))} AND {self._contains(f'{a}.value', f'{a}.type', sub)})")
            return self._guarded(typ, "object", parts)
        if isinstance(pattern, (list, tuple)):
            parts = [f"{typ} = 'array'"]
            for item in pattern:
                a = self.alias()
                parts.append(f"EXISTS (SELECT 1 FROM json_each({node}) AS {a} WHERE "
                             f"{self._contains(f'{a}.value', f'{a}.type', item)})")
            return self._guarded(typ, "array", parts)
        return self._scalar(node, typ, pattern)

    @staticmethod
    def _guarded(typ: str, expected: str, parts: list[str]) -> str:
        # CASE fixes the evaluation order: json_each never sees a scalar
        return f"(CASE WHEN {typ} = '{expected}' THEN ({' AND '.join(parts)}) ELSE 0 END)"

    def contains(self, column: str, pattern: Any) -> str:
        return self._contains(column, f"json_type({column})", pattern)

    def _key(self, key: str, body: Callable[[str], str]) -> str:
        """``metadata`` has ``key`` and ``body(alias)`` holds for its entry (``alias.value``/``.type``)."""
        a = self.alias()
        head = f"EXISTS (SELECT 1 FROM json_each(metadata) AS {a} WHERE {a}.key = {self.bind(key)} AND "
        return head + body(a) + ")"

    def meta_eq(self, f: MetaEq) -> str:
        value = f.value

        def body(a: str) -> str:
            if not isinstance(value, tuple):
                return self._scalar(f"{a}.value", f"{a}.type", value)
            parts = [f"json_array_length({a}.value) = {len(value)}"]
            for i, item in enumerate(value):
                parts.append(self._scalar(f"json_extract({a}.value, '$[{i}]')",
                                          f"json_type({a}.value, '$[{i}]')", item))
            return self._guarded(f"{a}.type", "array", parts)

        return self._key(f.key, body)

    def meta_contains(self, f: MetaContains) -> str:
        def body(a: str) -> str:
            parts = [f"{a}.type = 'array'"]
            for item in f.items:
                b = self.alias()
                parts.append(f"EXISTS (SELECT 1 FROM json_each({a}.value) AS {b} WHERE "
                             f"{self._scalar(f'{b}.value', f'{b}.type', item)})")
            return self._guarded(f"{a}.type", "array", parts)

        return self._key(f.key, body)

    def ids_in(self, ids: tuple[str, ...]) -> str:
        return f"id IN (SELECT value FROM json_each({self.bind(dumps(list(ids)).decode())}))"

    def name_contains(self, text: str) -> str:
        return f"instr(sg_lower(name), {self.bind(text.lower())}) > 0"


class PostgresQuery(_Query):
    """PostgreSQL (``metadata`` is ``jsonb``; ``vals`` is JSON text, cast when filtered)."""

    ph = "%s"

    def contains(self, column: str, pattern: Any) -> str:
        if column == "metadata":
            return f"metadata @> {self.bind(pg_json(pattern))}::jsonb"
        nul, repl = PG_NUL
        return (f"({column} IS NOT NULL AND replace({column}, {self.bind(nul)}, {self.bind(repl)})::jsonb "
                f"@> {self.bind(pg_json(pattern))}::jsonb)")

    def meta_eq(self, f: MetaEq) -> str:
        value = list(f.value) if isinstance(f.value, tuple) else f.value
        return f"(metadata -> {self.bind(f.key)}) = {self.bind(pg_json(value))}::jsonb"

    def meta_contains(self, f: MetaContains) -> str:
        key = self.bind(f.key)
        return (f"(jsonb_typeof(metadata -> {key}) = 'array' AND (metadata -> {self.bind(f.key)}) "
                f"@> {self.bind(pg_json(list(f.items)))}::jsonb)")

    def ids_in(self, ids: tuple[str, ...]) -> str:
        return f"id = ANY({self.bind(list(ids))})"

    def name_contains(self, text: str) -> str:
        return f"strpos(lower(name), {self.bind(text.lower())}) > 0"

    def page(self, q: DocQuery) -> str:
        if q.limit is None:
            return f"OFFSET {self.bind(q.offset)}" if q.offset else ""
        return super().page(q)
