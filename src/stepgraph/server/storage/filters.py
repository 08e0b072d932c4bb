"""What a document query can ask for, independent of the database.

``DocQuery`` is one search (or count) over documents of one kind: equality on the indexed
columns, JSON containment on ``metadata`` / ``values`` (PostgreSQL's ``@>``), and an access
filter on ``metadata`` made of ``MetaEq`` / ``MetaContains`` / ``AllOf`` / ``AnyOf`` (what an
authorization handler may return, already validated by ``server.auth.filters``). The SQL
backends compile it (``storage.sqlquery``); nothing here decodes a document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "AccessFilter",
    "AllOf",
    "AnyOf",
    "DocQuery",
    "MetaContains",
    "MetaEq",
    "Scalar",
]

Scalar = str | int | float | bool | None
"""A JSON scalar (booleans are not numbers: ``True`` never equals ``1``)."""


@dataclass(frozen=True)
class MetaEq:
    """``metadata[key]`` exists and equals ``value`` (a scalar or a list of scalars, in order)."""

    key: str
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class MetaContains:
    """``metadata[key]`` is a list holding every one of ``items``."""

    key: str
    items: tuple[Scalar, ...]


@dataclass(frozen=True)
class AllOf:
    """Every part holds (an empty ``AllOf`` holds for everything)."""

    parts: tuple[AccessFilter, ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one part holds."""

    parts: tuple[AccessFilter, ...]


AccessFilter = MetaEq | MetaContains | AllOf | AnyOf


@dataclass(frozen=True)
class DocQuery:
    """One search over documents of a kind; ``None`` fields do not filter.

    ``sort_by`` is a document field (``SORT_COLUMNS`` of ``storage.records``); ties are
    broken by id in the same direction. ``fields`` names the document fields the caller
    needs (``None``: all): large fields (thread values, run kwargs) are read and decoded only
    when named here, so a search that does not return them never touches them.
    """

    ids: tuple[str, ...] | None = None
    thread_id: str | None = None
    status: str | None = None
    graph_id: str | None = None
    name_contains: str | None = None
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    access: AccessFilter | None = None
    sort_by: str = "created_at"
    descending: bool = True
    limit: int | None = None
    offset: int = 0
    fields: frozenset[str] | None = None
