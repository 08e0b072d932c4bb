"""Crons in the server's storage, on SQLite and PostgreSQL: searches, sorting, and the
compare-and-swap that claims a firing (one winner among concurrent claimers, also two
processes' stores on one database)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from serve_harness import pg_schema_url, pg_unreachable

from stepgraph.server.resources.crons import Crons
from stepgraph.server.schemas.crons import CronCount, CronCreate, CronPatch, CronSearch
from stepgraph.server.storage import open_backend
from stepgraph.server.validation import validate

A1 = "5e0f6b46-d00f-5af4-87dc-ea2105ff526d"
A2 = "6e0f6b46-d00f-5af4-87dc-ea2105ff526d"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Two backends opened on the same database (two server processes)."""
    if request.param == "postgres":
        reason = pg_unreachable()
        if reason:
            pytest.skip(reason)
        with pg_schema_url() as url:
            async with open_backend(url, tmp_path / "x") as a, open_backend(url, tmp_path / "x") as b:
                yield a, b
    else:
        db = tmp_path / "db.sqlite"
        async with open_backend(str(db), db) as a, open_backend(str(db), db) as b:
            yield a, b


def _create(**body: Any) -> CronCreate:
    return validate(CronCreate, {"assistant_id": A1, **body})


async def test_search_sort_and_count(two_stores: tuple[Any, Any]) -> None:
    crons = Crons(two_stores[0].docs)
    yearly = await crons.create(_create(schedule="0 0 1 1 *", metadata={"k": 1}), assistant_id=A1, thread_id=None)
    hourly = await crons.create(_create(schedule="0 * * * *", enabled=False), assistant_id=A2, thread_id="t1")
    ends = (datetime.now(UTC) + timedelta(days=9000)).isoformat()
    daily = await crons.create(_create(schedule="0 0 * * *", end_time=ends), assistant_id=A1, thread_id="t1")
    ids = lambda found: [c["cron_id"] for c in found[0]]  # noqa: E731
    by_next = await crons.search(validate(CronSearch, {"sort_by": "next_run_date", "sort_order": "asc"}))
    expected = sorted([hourly, daily, yearly], key=lambda c: (c["next_run_date"], c["cron_id"]))  # ties by id
    assert ids(by_next) == [c["cron_id"] for c in expected]
    assert ids(await crons.search(validate(CronSearch, {"assistant_id": A1, "sort_by": "end_time",
                                                        "sort_order": "desc"}))) == \
        [yearly["cron_id"], daily["cron_id"]]  # no end time sorts first when descending
    assert ids(await crons.search(validate(CronSearch, {"thread_id": "t1", "enabled": False}))) == [hourly["cron_id"]]
    assert await crons.count(validate(CronCount, {"metadata": {"k": 1}})) == 1
    assert await crons.count(validate(CronCount, {"thread_id": "t1"})) == 2
    assert await crons.delete_thread("t1") == 2
    assert await crons.count(validate(CronCount, {})) == 1


async def test_a_firing_is_claimed_once_across_stores(two_stores: tuple[Any, Any]) -> None:
    mine, theirs = Crons(two_stores[0].docs), Crons(two_stores[1].docs)
    cron = await mine.create(_create(schedule="*/5 * * * *"), assistant_id=A1, thread_id=None)
    due = datetime.fromisoformat(cron["next_run_date"])
    now = due + timedelta(seconds=1)
    assert [c["cron_id"] for c in await theirs.due(now)] == [cron["cron_id"]]
    assert await theirs.due(due - timedelta(seconds=1)) == []
    docs = [await mine.get(cron["cron_id"]), await theirs.get(cron["cron_id"])] * 4
    wins = await asyncio.gather(*((mine if i % 2 else theirs).claim(doc, now) for i, doc in enumerate(docs)))
    assert sum(wins) == 1
    moved = await theirs.get(cron["cron_id"])
    assert datetime.fromisoformat(moved["next_run_date"]) == due + timedelta(minutes=5)
    assert await mine.due(now) == []


async def test_patch_never_undoes_a_claim(two_stores: tuple[Any, Any]) -> None:
    mine, theirs = Crons(two_stores[0].docs), Crons(two_stores[1].docs)
    cron = await mine.create(_create(schedule="*/5 * * * *"), assistant_id=A1, thread_id=None)
    due = datetime.fromisoformat(cron["next_run_date"])
    stale = await mine.get(cron["cron_id"])
    assert await theirs.claim(stale, due + timedelta(seconds=1))
    patched = await mine.patch(cron["cron_id"], validate(CronPatch, {"metadata": {"m": 1}}))
    assert patched["metadata"] == {"m": 1}
    assert datetime.fromisoformat(patched["next_run_date"]) == due + timedelta(minutes=5)
    assert not await mine.claim(stale, due + timedelta(seconds=1))  # the old firing is gone
