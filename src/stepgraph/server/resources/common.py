"""Sorting and paging arguments of the search endpoints (the filtering runs in SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stepgraph.server.errors import ApiError

__all__ = ["pagination_headers", "select_fields", "sort_spec"]


def sort_spec(body: dict[str, Any], allowed: Sequence[str], default: str) -> tuple[str, bool]:
    """``(sort_by, descending)`` from a search body (newest first by default); 422 when invalid."""
    key = body.get("sort_by") or default
    if key not in allowed:
        raise ApiError(422, f"Invalid 'sort_by': expected one of {', '.join(allowed)}.")
    order = body.get("sort_order") or "desc"
    if not isinstance(order, str) or order.lower() not in ("asc", "desc"):
        raise ApiError(422, "Invalid 'sort_order': expected 'asc' or 'desc'.")
    return key, order.lower() == "desc"


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
