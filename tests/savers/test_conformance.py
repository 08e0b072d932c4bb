"""The shipped saver conformance suite, run against every saver stepgraph ships."""

from __future__ import annotations

from typing import Any

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stepgraph.testing.saver_conformance import SaverConformance


class TestInMemorySaver(SaverConformance):
    @pytest.fixture
    def saver(self) -> InMemorySaver:
        return InMemorySaver()


class TestSqliteSaver(SaverConformance):
    @pytest.fixture
    def saver(self, tmp_path: Any):
        with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
            yield saver


class TestAsyncSqliteSaver(SaverConformance):
    @pytest.fixture
    async def saver(self, tmp_path: Any):
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as s:
            yield s


@pytest.mark.postgres
class TestPostgresSaver(SaverConformance):
    @pytest.fixture
    def saver(self, pg_dsn: str):
        from stepgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(pg_dsn) as saver:
            saver.setup()
            yield saver


@pytest.mark.postgres
class TestAsyncPostgresSaver(SaverConformance):
    @pytest.fixture
    async def saver(self, pg_dsn: str):
        from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
            await saver.setup()
            yield saver


class TestSqliteSaverEncrypted(SaverConformance):
    """An encrypting serializer: rows are packed by it, values are not split into pieces."""

    @pytest.fixture
    def saver(self, tmp_path: Any):
        pytest.importorskip("Crypto")
        from stepgraph.checkpoint.serde.encrypted import EncryptedSerializer

        serde = EncryptedSerializer.from_pycryptodome_aes(key=b"k" * 16)
        with SqliteSaver.from_conn_string(str(tmp_path / "cp.db"), serde=serde) as saver:
            yield saver


class TestSqliteSaverMsgpackBackend(SaverConformance):
    """The pure-Python msgpack backend of the serializer."""

    @pytest.fixture
    def saver(self, tmp_path: Any):
        from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        serde = JsonPlusSerializer(backend="msgpack")
        with SqliteSaver.from_conn_string(str(tmp_path / "cp.db"), serde=serde) as saver:
            yield saver
