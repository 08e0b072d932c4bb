"""Sorting and paging arguments of the search endpoints (the filtering runs in SQL)."""

from __future__ import annotations

from typing import Any

__all__ = ["pagination_headers", "select_fields", "sort_spec"]


def sort_spec(sort_by: str | None, sort_order: str | None, default: str) -> tuple[str, bool]:
    """``(sort_by, descending)`` of a search (newest first by default).

    The values come from the typed search models (``schemas``), whose ``Literal`` types
    already refused any field the storage cannot sort by (``storage.records.SORT_COLUMNS``).
    """
    return sort_by or default, (sort_order or "desc") == "desc"


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
