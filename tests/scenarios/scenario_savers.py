"""Savers and thread helpers shared by the durable-execution scenarios."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stepgraph.checkpoint.memory import InMemorySaver

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
SAVER_KINDS = ["memory", "sqlite", "postgres"]


def _pg_conn() -> Any:
    try:
        import psycopg

        return psycopg.connect(PG_DSN, autocommit=True, prepare_threshold=0, connect_timeout=2)
    except Exception as exc:  # ImportError or any connection failure
        pytest.skip(f"PostgreSQL not reachable at {PG_DSN}: {exc}")


def open_saver(kind: str, tmp_path: Path) -> Iterator[Any]:
    """A fresh checkpointer of ``kind`` (closed afterwards)."""
    if kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        from stepgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "x.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()
    else:
        from stepgraph.checkpoint.postgres import PostgresSaver

        conn = _pg_conn()
        yield PostgresSaver(conn)
        conn.close()


def cfg() -> dict[str, Any]:
    """A config on a new, unique thread."""
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


def get_state(driver: Any, app: Any, config: Any) -> Any:
    """``get_state`` through the driver's API (``aget_state`` for the async driver)."""
    if driver.is_async:
        return asyncio.run(app.aget_state(config))
    return app.get_state(config)
