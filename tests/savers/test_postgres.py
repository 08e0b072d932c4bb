"""PostgreSQL savers: connection pools, migrations, and sync calls on an async saver."""

from __future__ import annotations

import asyncio
import threading

import pytest

from stepgraph.checkpoint.base import SaverError
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config

pytestmark = pytest.mark.postgres


def test_connection_pool(pg_dsn: str) -> None:
    """PostgresSaver borrows connections from a psycopg_pool ConnectionPool, from many threads."""
    from psycopg_pool import ConnectionPool

    from stepgraph.checkpoint.postgres import PostgresSaver

    with ConnectionPool(pg_dsn, min_size=1, max_size=4, open=True) as pool:
        saver = PostgresSaver(pool)
        saver.setup()

        def work(n: int) -> None:
            cp, new = next_checkpoint(saver, None, {"n": n})
            saver.put(thread_config(f"t{n}"), cp, {}, new)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(list(saver.list(None))) == 8


async def test_async_connection_pool(pg_dsn: str) -> None:
    """AsyncPostgresSaver works on an AsyncConnectionPool."""
    from psycopg_pool import AsyncConnectionPool

    from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncConnectionPool(pg_dsn, min_size=1, max_size=3, open=False) as pool:
        saver = AsyncPostgresSaver(pool)
        cps = [next_checkpoint(saver, None, {"n": n}) for n in range(6)]
        await asyncio.gather(
            *(saver.aput(thread_config(f"t{n}"), cp, {}, new) for n, (cp, new) in enumerate(cps))
        )
        assert len([t async for t in saver.alist(None)]) == 6


def test_setup_is_idempotent_and_refuses_newer_schemas(pg_dsn: str) -> None:
    """Concurrent setup() calls migrate once; a newer schema version raises SG413."""
    from stepgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_dsn) as a, PostgresSaver.from_conn_string(pg_dsn) as b:
        threads = [threading.Thread(target=s.setup) for s in (a, b, a)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert a.conn.execute("SELECT v FROM sg_checkpoint_migrations").fetchall() == [(0,), (1,), (2,)]
        a.conn.execute("INSERT INTO sg_checkpoint_migrations (v) VALUES (99)")
    with PostgresSaver.from_conn_string(pg_dsn) as c, pytest.raises(SaverError) as info:
        c.setup()
    assert info.value.code == "SG413"


async def test_async_saver_sync_calls(pg_dsn: str) -> None:
    """Sync methods of AsyncPostgresSaver work from other threads and raise SG415 on its loop."""
    from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        await saver.setup()
        with pytest.raises(SaverError) as info:
            saver.get_tuple(thread_config("t"))
        assert info.value.code == "SG415"
        cp, new = next_checkpoint(saver, None, {"a": 1})
        config = await asyncio.to_thread(saver.put, thread_config("t"), cp, {}, new)
        found = await saver.aget_tuple(config)
        assert found is not None and found.checkpoint["channel_values"] == {"a": 1}


def test_a_chat_reads_the_same_as_a_cold_reader(pg_dsn: str) -> None:
    """The reads memory of delta chains (``checkpoint/_chains``) on PostgreSQL: after every
    turn the warm saver reads what a saver with no memory reads, and another writer's
    rewrite of the thread is read, not the remembered chain."""
    from langchain_core.messages import HumanMessage
    from tests.unit.checkpoint.test_chains import _chat, _say

    from stepgraph.checkpoint.postgres import PostgresSaver

    config = {"configurable": {"thread_id": "chat"}}

    def read(saver: PostgresSaver) -> list[object]:
        found = saver.get_tuple(config)
        assert found is not None
        return found.checkpoint["channel_values"]["messages"]

    with PostgresSaver.from_conn_string(pg_dsn) as warm:
        warm.setup()
        graph = _chat(warm)
        for turn in range(25):
            out = _say(graph, turn, config)
            with PostgresSaver.from_conn_string(pg_dsn) as cold:
                assert read(warm) == out["messages"] == read(cold)
        assert warm._codec.cache_usage()["reads"][0] >= 1
        with PostgresSaver.from_conn_string(pg_dsn) as other:
            other.delete_thread("chat")
            _chat(other).invoke({"messages": [HumanMessage(content="other", id="o")]}, config)
            assert read(warm) == read(other) and read(warm)[0].content == "other"
