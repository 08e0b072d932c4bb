"""Filtering, sorting and paging of documents (shared by the search endpoints)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from stepgraph.server.errors import ApiError

__all__ = ["contains", "page", "select_fields"]


def contains(value: Any, pattern: Any) -> bool:
    """JSON containment (PostgreSQL's ``@>``): every key/item of ``pattern`` is in ``value``."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(k in value and contains(value[k], v) for k, v in pattern.items())
    if isinstance(pattern, list):
        return isinstance(value, list) and all(any(contains(v, p) for v in value) for p in pattern)
    return value == pattern


def page(
    docs: Iterable[dict[str, Any]], *, sort_by: str | None, sort_order: str | None,
    allowed: Sequence[str], default_sort: str, limit: int, offset: int,
) -> tuple[list[dict[str, Any]], int]:
    """Sort ``docs`` (newest first by default) and cut one page; returns ``(page, total)``."""
    key = sort_by or default_sort
    if key not in allowed:
        raise ApiError(422, f"Invalid 'sort_by': expected one of {', '.join(allowed)}.")
    order = (sort_order or "desc").lower()
    if order not in ("asc", "desc"):
        raise ApiError(422, "Invalid 'sort_order': expected 'asc' or 'desc'.")
    items = sorted(docs, key=lambda d: (d.get(key) is None, str(d.get(key) or "")), reverse=order == "desc")
    return items[offset: offset + limit], len(items)


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
