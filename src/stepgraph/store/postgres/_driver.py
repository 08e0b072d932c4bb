"""Lazy import of psycopg 3 for the PostgreSQL stores, with a coded hint when it is missing."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from stepgraph.store.base import StoreError

__all__ = ["is_pool", "require_psycopg"]


def require_psycopg() -> ModuleType:
    """The ``psycopg`` module, or ``StoreError`` SG434 naming the extra to install."""
    try:
        import psycopg
        import psycopg.rows  # noqa: F401 - tuple_row, used by the stores
    except ImportError as exc:
        raise StoreError(
            "The PostgreSQL stores need psycopg 3, which is not installed.",
            code="SG434",
            hint="pip install 'stepgraph[postgres]'",
        ) from exc
    return psycopg


def is_pool(conn: Any) -> bool:
    """True for a psycopg_pool pool (it lends connections), False for a single connection."""
    return hasattr(conn, "getconn") and hasattr(conn, "connection")
