"""Saver fixtures: per-test PostgreSQL schemas, skipped cleanly when PostgreSQL is unreachable."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
_pg_state: dict[str, str | None] = {}


def _pg_unreachable() -> str | None:
    """Why PostgreSQL cannot be used (``None`` when it can); checked once per session."""
    if "reason" not in _pg_state:
        try:
            import psycopg

            psycopg.connect(PG_BASE, connect_timeout=2).close()
            _pg_state["reason"] = None
        except Exception as exc:  # ImportError or any connection failure
            _pg_state["reason"] = f"PostgreSQL not reachable at {PG_BASE}: {exc}"
    return _pg_state["reason"]


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    """A DSN whose search_path is a fresh schema, dropped after the test."""
    reason = _pg_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"sg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
