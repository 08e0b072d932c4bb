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

from stepgraph.server.errors import ApiError
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
from stepgraph.server.storage.records import sort_column

__all__ = ["PG_NUL", "PostgresQuery", "SqliteQuery", "check_pattern", "pattern_problem", "pg_json"]

PG_NUL = ("\\u0000", "\\ufffd")
"""How JSON text is made acceptable to ``jsonb`` (the escape of NUL -> that of U+FFFD)."""
_INT64 = 2**63


def pg_json(obj: Any) -> str:
    """``obj`` as JSON text that ``jsonb`` accepts."""
    return dumps(obj, stream=False).decode().replace(*PG_NUL)


MAX_PATTERN_LEAVES = 1000
"""Most values (and keys) one containment filter may test."""
MAX_PATTERN_DEPTH = 64
"""Deepest objects/lists a containment filter may have."""
MAX_LIST_NESTING = 4
"""Deepest lists-in-lists a containment filter may descend into."""


def _all(parts: list[str]) -> str:
    """``parts`` joined by AND, grouped so the expression stays shallow however many."""
    if len(parts) == 1:
        return parts[0]
    if len(parts) <= 32:
        return "(" + " AND ".join(parts) + ")"
    size = -(-len(parts) // 32)
    return _all([_all(parts[i:i + size]) for i in range(0, len(parts), size)])


def _shape(pattern: Any, depth: int = 0, lists: int = 0) -> tuple[int, int, int]:
    """``(leaves, depth, deepest list nesting)`` of a containment pattern."""
    if isinstance(pattern, (dict, list, tuple)):
        inner = lists + (0 if isinstance(pattern, dict) else 1)
        items = pattern.values() if isinstance(pattern, dict) else pattern
        found = [_shape(v, depth + 1, inner) for v in items]
        return (1 + sum(f[0] for f in found), max((f[1] for f in found), default=depth + 1),
                max((f[2] for f in found), default=inner))
    return 1, depth, lists


def pattern_problem(pattern: Any) -> str | None:
    """What makes a containment filter too large for any backend to be asked to run, or ``None``."""
    leaves, depth, nesting = _shape(pattern)
    if leaves > MAX_PATTERN_LEAVES:
        return f"more than {MAX_PATTERN_LEAVES} values to match"
    if depth > MAX_PATTERN_DEPTH:
        return f"nested more than {MAX_PATTERN_DEPTH} levels deep"
    if nesting > MAX_LIST_NESTING:
        return f"lists nested more than {MAX_LIST_NESTING} deep"
    return None


def check_pattern(name: str, pattern: Any) -> None:
    """422 for a containment filter no backend should be asked to run (the HTTP layer refuses
    these already, ``schemas.fields.SearchFilter``; this guards every other caller)."""
    problem = pattern_problem(pattern)
    if problem is not None:
        raise ApiError(422, f"Invalid '{name}' filter: {problem}.")


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
            check_pattern("metadata", q.metadata)
            conds.append(self.contains("metadata", q.metadata))
        if q.values:
            check_pattern("values", q.values)
            conds.append(self.contains("vals", q.values))
        if q.access is not None:
            conds.append(self.access(q.access))
        return " AND ".join(conds)

    def order(self, q: DocQuery, kind: str = "") -> str:
        """``ORDER BY``: documents without the field last (first when descending), then by id."""
        column = sort_column(kind, q.sort_by)
        way = "DESC" if q.descending else "ASC"
        nulls = f"({column} IS NULL) {way}, " if column != "id" else ""
        return f"ORDER BY {nulls}{column} {way}, id {way}"

    def page(self, q: DocQuery) -> str:
        """``LIMIT``/``OFFSET`` of ``q`` (none when unlimited)."""
        if q.limit is None:
            return f"LIMIT -1 OFFSET {self.bind(q.offset)}" if q.offset else ""
        return f"LIMIT {self.bind(q.limit)} OFFSET {self.bind(q.offset)}"


class SqliteQuery(_Query):
    """SQLite (3.38+ JSON functions).

    Paths are built in Python and bound as parameters (``$."key"``); every condition is
    addressed from the column itself (``json_type``, ``json_extract``, ``->``), so nesting
    in SQL grows only with the lists a pattern descends into (``json_each`` over the list,
    its elements addressed by ``fullkey``). Strings are compared as JSON text (``->``
    against the pattern encoded the way the column was), which keeps NUL characters
    exact. A key the path syntax cannot spell (holding ``"``, ``\\`` or a control
    character) is matched through ``json_each`` by key instead; there SQLite reads strings
    only up to a NUL character (a limit of its JSON functions), so a NUL in such a key, or
    in a string under such a key, does not match exactly.
    """

    ph = "?"

    def _number(self, value: int | float) -> Any:
        return float(value) if isinstance(value, int) and abs(value) >= _INT64 else value

    def _scalar(self, typ: str, value: Scalar, *, decoded: Callable[[], str], raw: Callable[[], str] | None) -> str:
        """``value`` equals the node of type ``typ`` (``decoded``: its SQL value, ``raw``: its JSON text)."""
        if value is None:
            return f"{typ} = 'null'"
        if isinstance(value, bool):
            return f"{typ} = '{'true' if value else 'false'}'"
        if isinstance(value, str):
            if raw is not None:
                return f"({typ} = 'text' AND {raw()} = {self.bind(dumps(value).decode())})"
            return f"({typ} = 'text' AND {decoded()} = {self.bind(value)})"
        return f"({typ} IN ('integer', 'real') AND {decoded()} = {self.bind(self._number(value))})"

    def _path(self, base: str | None, suffix: str) -> str:
        """SQL for the path ``base`` + ``suffix`` (``base`` None: the root ``$``)."""
        if base is None:
            return self.bind("$" + suffix)
        return f"({base} || {self.bind(suffix)})" if suffix else base

    @staticmethod
    def _label(key: str) -> str | None:
        if '"' in key or "\\" in key or any(ord(c) < 0x20 for c in key):
            return None
        return f'."{key}"'

    def _at(self, col: str, base: str | None, suffix: str, pattern: Any) -> str:
        """``pattern`` contained in the value at path ``base`` + ``suffix`` of ``col``."""
        return _all(self._conds(col, base, suffix, pattern))

    def _conds(self, col: str, base: str | None, suffix: str, pattern: Any) -> list[str]:
        """The conditions (all must hold) of ``_at``: flat for objects, one ``EXISTS`` per list item."""
        if isinstance(pattern, dict):
            parts: list[str] = []
            for key, sub in pattern.items():
                label = self._label(str(key))
                if label is None:
                    parts.append(self._odd_key(col, base, suffix, str(key), sub))
                else:
                    parts.extend(self._conds(col, base, suffix + label, sub))
            return parts or [f"json_type({col}, {self._path(base, suffix)}) = 'object'"]
        if isinstance(pattern, (list, tuple)):
            parts = [f"json_type({col}, {self._path(base, suffix)}) = 'array'"]
            for item in pattern:
                a = self.alias()
                parts.append(f"EXISTS (SELECT 1 FROM json_each({col}, {self._path(base, suffix)}) AS {a} "
                             f"WHERE {self._item(col, a, item)})")
            return parts
        typ = f"json_type({col}, {self._path(base, suffix)})"
        return [self._scalar(typ, pattern, decoded=lambda: f"json_extract({col}, {self._path(base, suffix)})",
                             raw=lambda: f"({col} -> {self._path(base, suffix)})")]

    def _item(self, col: str, a: str, item: Any) -> str:
        """``item`` contained in the list element ``a`` (a ``json_each`` row over ``col``)."""
        if isinstance(item, dict):
            return _all([f"{a}.type = 'object'", *self._conds(col, f'{a}.fullkey', '', item)])
        if isinstance(item, (list, tuple)):
            return _all([f"{a}.type = 'array'", *self._conds(col, f'{a}.fullkey', '', item)])
        return self._scalar(f"{a}.type", item, decoded=lambda: f"{a}.value", raw=lambda: f"({col} -> {a}.fullkey)")

    def _odd_key(self, col: str, base: str | None, suffix: str, key: str, sub: Any) -> str:
        """``{key: sub}`` at the path, for a key paths cannot spell: ``json_each`` by key."""
        a = self.alias()
        head = (f"EXISTS (SELECT 1 FROM json_each({col}, {self._path(base, suffix)}) AS {a} "
                f"WHERE {a}.key = {self.bind(key)} AND ")
        if not isinstance(sub, (dict, list, tuple)):
            return head + self._scalar(f"{a}.type", sub, decoded=lambda: f"{a}.value", raw=None) + ")"
        expected = "object" if isinstance(sub, dict) else "array"
        # a container's value is its JSON text; CASE keeps json functions away from scalars
        return head + f"(CASE WHEN {a}.type = '{expected}' THEN {self._at(f'{a}.value', None, '', sub)} ELSE 0 END))"

    def contains(self, column: str, pattern: Any) -> str:
        return f"(json_type({column}) = 'object' AND {self._at(column, None, '', pattern)})"

    def meta_eq(self, f: MetaEq) -> str:
        if not isinstance(f.value, tuple):  # a scalar equals what contains it
            return self._at("metadata", None, "", {f.key: f.value})
        label = self._label(f.key)
        if label is None:
            return self._odd_list_eq(f)
        parts = [f"json_type(metadata, {self.bind('$' + label)}) = 'array'",
                 f"json_array_length(metadata, {self.bind('$' + label)}) = {len(f.value)}"]
        parts += [self._at("metadata", None, f"{label}[{i}]", item) for i, item in enumerate(f.value)]
        return _all(parts)

    def _odd_list_eq(self, f: MetaEq) -> str:
        a = self.alias()
        head = f"EXISTS (SELECT 1 FROM json_each(metadata) AS {a} WHERE {a}.key = {self.bind(f.key)} AND "
        items = f.value if isinstance(f.value, tuple) else ()
        parts = [f"json_array_length({a}.value) = {len(items)}"]
        for i, item in enumerate(items):
            parts.append(self._scalar(f"json_type({a}.value, '$[{i}]')", item,
                                      decoded=lambda i=i: f"json_extract({a}.value, '$[{i}]')",
                                      raw=lambda i=i: f"({a}.value -> '$[{i}]')"))
        return head + f"(CASE WHEN {a}.type = 'array' THEN ({' AND '.join(parts)}) ELSE 0 END))"

    def meta_contains(self, f: MetaContains) -> str:
        return self._at("metadata", None, "", {f.key: list(f.items)})

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

    @staticmethod
    def _key(key: str) -> str:
        return key.replace("\x00", "\ufffd")  # as the key reads in the sanitized jsonb

    def meta_eq(self, f: MetaEq) -> str:
        value = list(f.value) if isinstance(f.value, tuple) else f.value
        return f"(metadata -> {self.bind(self._key(f.key))}) = {self.bind(pg_json(value))}::jsonb"

    def meta_contains(self, f: MetaContains) -> str:
        key = self.bind(self._key(f.key))
        return (f"(jsonb_typeof(metadata -> {key}) = 'array' AND (metadata -> {self.bind(self._key(f.key))}) "
                f"@> {self.bind(pg_json(list(f.items)))}::jsonb)")

    def ids_in(self, ids: tuple[str, ...]) -> str:
        return f"id = ANY({self.bind(list(ids))})"

    def name_contains(self, text: str) -> str:
        return f"strpos(lower(name), {self.bind(text.lower())}) > 0"

    def page(self, q: DocQuery) -> str:
        if q.limit is None:
            return f"OFFSET {self.bind(q.offset)}" if q.offset else ""
        return super().page(q)
