"""The shipped store conformance suite, run against every store stepgraph ships."""

from __future__ import annotations

from contextlib import AsyncExitStack, ExitStack
from typing import Any

import pytest

from stepgraph.store.memory import InMemoryStore
from stepgraph.store.sqlite import SqliteStore
from stepgraph.store.sqlite.aio import AsyncSqliteStore
from stepgraph.testing.store_conformance import StoreConformance


class TestInMemoryStore(StoreConformance):
    @pytest.fixture
    def make_store(self) -> Any:
        return lambda **kwargs: InMemoryStore(**kwargs)


class TestSqliteStore(StoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Any) -> Any:
        path = str(tmp_path / "store.db")
        with ExitStack() as stack:
            yield lambda **kw: stack.enter_context(SqliteStore.from_conn_string(path, **kw))


class TestAsyncSqliteStore(StoreConformance):
    @pytest.fixture
    async def make_store(self, tmp_path: Any) -> Any:
        path = str(tmp_path / "store.db")
        async with AsyncExitStack() as stack:

            async def make(**kw: Any) -> AsyncSqliteStore:
                return await stack.enter_async_context(
                    AsyncSqliteStore.from_conn_string(path, **kw)
                )

            yield make


@pytest.mark.postgres
class TestPostgresStore(StoreConformance):
    @pytest.fixture
    def make_store(self, pg_dsn: str) -> Any:
        from stepgraph.store.postgres import PostgresStore

        with ExitStack() as stack:
            yield lambda **kw: stack.enter_context(PostgresStore.from_conn_string(pg_dsn, **kw))


@pytest.mark.postgres
class TestAsyncPostgresStore(StoreConformance):
    @pytest.fixture
    async def make_store(self, pg_dsn: str) -> Any:
        from stepgraph.store.postgres import AsyncPostgresStore

        async with AsyncExitStack() as stack:

            async def make(**kw: Any) -> AsyncPostgresStore:
                ctx = AsyncPostgresStore.from_conn_string(pg_dsn, **kw)
                return await stack.enter_async_context(ctx)

            yield make
