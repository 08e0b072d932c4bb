"""Sorting and paging arguments of the search endpoints (the filtering runs in SQL)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepgraph.server.storage import DocStore
    from stepgraph.server.storage.filters import DocQuery

__all__ = ["pagination_headers", "search_page", "select_fields", "sort_spec"]


def sort_spec(sort_by: str | None, sort_order: str | None, default: str) -> tuple[str, bool]:
    """``(sort_by, descending)`` of a search (newest first by default).

    The values come from the typed search models (``schemas``), whose ``Literal`` types
    already refused any field the storage cannot sort by (``storage.records.SORT_COLUMNS``).
    """
    return sort_by or default, (sort_order or "desc") == "desc"


async def search_page(docs: DocStore, kind: str, query: DocQuery, req: Any,
                      fields: frozenset[str] | None = None) -> tuple[list[dict[str, Any]], int, int, int]:
    """One page of a search and the total: ``(items, total, offset, limit)``. ``req`` is a
    search model (``limit``, ``offset``, ``sort_by``, ``sort_order``); newest first by default."""
    limit = req.limit if req.limit is not None else 10
    offset = req.offset or 0
    sort_by, descending = sort_spec(req.sort_by, req.sort_order, "created_at")
    items = await docs.query(kind, replace(query, sort_by=sort_by, descending=descending,
                                           limit=limit, offset=offset, fields=fields))
    return items, await docs.count(kind, query), offset, limit


def select_fields(doc: dict[str, Any], select: list[str] | None) -> dict[str, Any]:
    """Only the ``select``ed fields of ``doc`` (all of them when ``select`` is empty)."""
    if not select:
        return doc
    return {k: doc.get(k) for k in select}


def pagination_headers(offset: int, limit: int, count: int, total: int) -> dict[str, str]:
    """``X-Pagination-Total`` and, when more remain, ``X-Pagination-Next``."""
    headers = {"X-Pagination-Total": str(total)}
    if offset + count < total:
        headers["X-Pagination-Next"] = str(offset + limit)
    return headers
