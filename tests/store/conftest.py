"""Store fixtures: one PostgreSQL schema per session, emptied before each test; skipped
cleanly when PostgreSQL is unreachable."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
_pg_state: dict[str, str | None] = {}

_EMPTY_TABLES = """DO $$ BEGIN
    IF to_regclass('sg_store') IS NOT NULL THEN TRUNCATE sg_store, sg_store_vectors; END IF;
END $$"""


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


@pytest.fixture(scope="session")
def pg_schema_dsn() -> Iterator[str]:
    """A DSN whose search_path is a schema made for this session, dropped at its end."""
    reason = _pg_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"sg_store_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_dsn(pg_schema_dsn: str) -> str:
    """The session schema's DSN, with the store tables emptied."""
    import psycopg

    with psycopg.connect(pg_schema_dsn, autocommit=True) as conn:
        conn.execute(_EMPTY_TABLES)
    return pg_schema_dsn
