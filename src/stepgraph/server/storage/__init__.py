"""Persistence backends of the server (SQLite by default, PostgreSQL on request)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from stepgraph.server.storage.base import Backend, DocStore

__all__ = ["Backend", "DocStore", "open_backend"]


@asynccontextmanager
async def open_backend(database_url: str | None, default_path: Path, *, store_index: dict[str, Any] | None = None,
                       store_ttl: dict[str, Any] | None = None, pool_size: int | None = None,
                       check_connections: bool = False) -> AsyncIterator[Backend]:
    """Open the backend named by ``database_url`` (its store with ``store_index``/``store_ttl``,
    the ``index=``/``ttl=`` of ``stepgraph.store``'s stores).

    ``postgres://`` / ``postgresql://`` URLs use PostgreSQL for everything; ``sqlite:///path``,
    a plain file path or ``None`` (the file ``default_path``) use SQLite. ``pool_size``: the
    PostgreSQL pool's connections (default 20; a cluster sizes it per role); ``check_connections``:
    the pool checks a connection before lending it (a cluster rides out a server restart).
    """
    url = database_url or ""
    if url.startswith(("postgres://", "postgresql://")):
        from stepgraph.server.storage.postgres import open_postgres

        async with open_postgres(url, store_index=store_index, store_ttl=store_ttl, max_size=pool_size or 20,
                                 check_connections=check_connections) as backend:
            yield backend
        return
    from stepgraph.server.storage.sqlite import open_sqlite

    path: str | Path = default_path
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):] or default_path
    elif url.startswith("sqlite://"):
        path = url[len("sqlite://"):] or default_path
    elif url:
        path = url
    async with open_sqlite(path, store_index=store_index, store_ttl=store_ttl) as backend:
        yield backend
