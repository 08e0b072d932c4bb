"""Unit tests of ``cluster/cuts.py`` and of the commit side of ``runlogs.Publisher``, plus the
pool's connection check (no server processes; the stores against the real PostgreSQL)."""

from __future__ import annotations

import asyncio

import pytest
from cluster_harness import PG_BASE, unreachable

from stepgraph.server.cluster.cuts import Committed, TaggedEvent, make_tag, parse_tag
from stepgraph.server.cluster.events import EventStore, Item, StaleEpoch
from stepgraph.server.runtime.eventlog import Event


def _ev(i: int, tag: str | None, name: str = "updates") -> TaggedEvent:
    return TaggedEvent((i, 0), name, b"{}", tag)


def test_tags_round_trip_and_bad_tags_are_kept() -> None:
    assert parse_tag(make_tag(3, 7)) == (3, 7)
    assert parse_tag(None) is None and parse_tag("") is None and parse_tag("x:y") is None
    assert Committed({1: 0}).keep(_ev(1, "x:y"))  # unreadable: kept, never dropped


def test_events_above_a_cut_are_skipped_and_the_rest_kept() -> None:
    committed = Committed({1: 2})  # epoch 1 recorded commit 2, then lost the run
    events = [_ev(1, None, "metadata"), _ev(2, make_tag(1, 1)), _ev(3, make_tag(1, 2)), _ev(4, make_tag(1, 3)),
              _ev(5, make_tag(2, 1), "metadata"), _ev(6, make_tag(2, 1))]
    kept = [e.key[0] for e in events if committed.keep(e)]
    assert kept == [1, 2, 3, 5, 6] and committed.skipped == 1
    assert Committed().keep(_ev(9, make_tag(5, 99)))  # no cut: the epoch is live or finished
    assert Committed().keep(Event((1, 0), "values", b"{}"))  # a plain event has no tag


def test_a_newer_epoch_asks_for_the_cuts_again() -> None:
    committed = Committed()
    assert not committed.needs_refresh([_ev(1, make_tag(1, 1))])  # epoch 1 has no predecessor
    assert not committed.needs_refresh([_ev(2, make_tag(1, 2))])
    assert committed.needs_refresh([_ev(3, make_tag(1, 2)), _ev(4, make_tag(2, 1))])
    assert not committed.needs_refresh([_ev(5, make_tag(2, 1))])


class _Slow(EventStore):
    """An in-memory store whose appends take ``delay`` s (or fail while ``down``)."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.down = False
        self.items: list[Item] = []

    async def append(self, run_id: str, items: list[Item], epoch: int | None = None) -> None:
        await asyncio.sleep(self.delay)
        if self.down:
            raise ConnectionError("store away")
        if epoch is not None and epoch < 0:
            raise StaleEpoch("fenced")
        self.items.extend(items)

    async def cut(self, run_id: str, epoch: int, commits: int) -> None:
        return None

    async def cuts(self, run_id: str) -> dict[int, int]:
        return {}

    async def read(self, run_id, after, count, block):  # noqa: ANN001, ANN201
        return []

    async def last_key(self, run_id):  # noqa: ANN001, ANN201
        return None, False


async def test_a_commit_waits_until_the_events_before_it_are_published() -> None:
    from stepgraph.server.cluster.fence import Lease
    from stepgraph.server.cluster.runlogs import Publisher

    store = _Slow()
    lease = Lease("r1", "t1", 1, 1)
    pub = Publisher(store, "r1", epoch=1, tag=lambda: make_tag(lease.epoch, lease.next_commit))
    lease.before_commit = lambda: pub.flushed(5.0)
    pub.push("updates", b"1")
    pub.push("updates", b"2")
    assert await lease.begin_commit() == 1
    assert [i[2] for i in store.items] == ["1:1", "1:1"]  # in the store before the commit goes on
    pub.push("updates", b"3")
    assert await lease.begin_commit() == 2
    assert store.items[-1][2] == "1:2"
    pub.finish(end=True)
    await asyncio.wait_for(pub.task, 5)
    await pub.flushed(5.0)  # a stopped publisher: at once


async def test_a_commit_does_not_wait_for_a_store_that_is_away() -> None:
    from stepgraph.server.cluster.runlogs import Publisher

    store = _Slow(delay=0.01)
    store.down = True
    pub = Publisher(store, "r1", epoch=1, tag=lambda: "1:1", give_up=30)
    pub.push("updates", b"1")
    await asyncio.sleep(0.1)  # the write is being retried
    assert pub.failing
    await asyncio.wait_for(pub.flushed(5.0), 0.5)
    store.down = False
    await asyncio.wait_for(pub.flushed(5.0), 5)
    pub.finish(end=False)
    await asyncio.wait_for(pub.task, 5)
    assert [i[1] for i in store.items] == [b"1"]


async def test_the_pool_check_costs_no_round_trip_and_finds_a_closed_connection() -> None:
    if unreachable(redis=False):
        pytest.skip("PostgreSQL not reachable")
    import psycopg

    from stepgraph.server.storage.postgres import check_idle_connection

    async with await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as conn, \
            await psycopg.AsyncConnection.connect(PG_BASE, autocommit=True) as killer:
        await check_idle_connection(conn)  # idle and healthy: passes
        pid = conn.info.backend_pid
        await killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(100):  # the server's goodbye makes the idle socket readable
            await asyncio.sleep(0.02)
            try:
                await check_idle_connection(conn)
            except psycopg.OperationalError:
                break
        else:
            raise AssertionError("a terminated connection passed the check")
