"""Crons through the official ``langgraph_sdk`` client: create (thread / stateless), search,
count, patch, delete, firing (claimed atomically), ``end_time``, time zones, restarts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from server_harness import RunningServer, start_server

from stepgraph.server.runtime.cronspec import next_run
from stepgraph.server.util import system_assistant_id

SIMPLE = system_assistant_id("simple")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(tmp_path_factory.mktemp("crons") / "db.sqlite")
    try:
        yield srv
    finally:
        srv.stop()


def _on_server(srv: RunningServer, coro: Any) -> Any:
    """Run ``coro`` on the server's event loop (white-box: the scheduler, the storage)."""
    loop = srv.ctx.cron_scheduler._background._task.get_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop).result(20)


def _tick(srv: RunningServer, now: datetime) -> list[str]:
    return _on_server(srv, srv.ctx.cron_scheduler.tick(now))


def _when(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


def _wait_runs(client: Any, thread_id: str, n: int, timeout: float = 20) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        runs = client.runs.list(thread_id)
        if len(runs) >= n and all(r["status"] not in ("pending", "running") for r in runs):
            return runs
        assert time.monotonic() < deadline, runs
        time.sleep(0.05)


def test_thread_cron_has_langgraphs_shape(client: Any) -> None:
    thread = client.threads.create()
    cron = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *",
                                          input={"value": "c"})
    assert set(cron) == {"cron_id", "assistant_id", "thread_id", "user_id", "end_time", "schedule", "timezone",
                         "payload", "next_run_date", "metadata", "on_run_completed", "enabled", "created_at",
                         "updated_at"}
    assert cron["assistant_id"] == SIMPLE and cron["thread_id"] == thread["thread_id"]
    assert cron["user_id"] == "" and cron["end_time"] is None and cron["timezone"] is None
    assert cron["payload"] == {"assistant_id": SIMPLE, "schedule": "0 0 1 1 *", "input": {"value": "c"},
                               "config": {"configurable": {"cron_id": cron["cron_id"]}}}
    assert cron["next_run_date"] == f"{datetime.now(UTC).year + 1}-01-01T00:00:00+00:00"
    assert cron["metadata"] == {} and cron["on_run_completed"] is None and cron["enabled"] is True


def test_stateless_cron_defaults_and_validation(client: Any) -> None:
    from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

    cron = client.crons.create("simple", schedule="*/5 * * * *", metadata={"team": "a"})
    assert cron["thread_id"] is None and cron["on_run_completed"] == "delete"
    assert cron["metadata"] == {"team": "a"}
    assert _when(cron["next_run_date"]).minute % 5 == 0
    with pytest.raises(UnprocessableEntityError, match="Invalid cron schedule"):
        client.crons.create("simple", schedule="every day")
    with pytest.raises(UnprocessableEntityError, match="Invalid timezone"):
        client.crons.create("simple", schedule="* * * * *", timezone="Mars/Olympus")
    with pytest.raises(NotFoundError):
        client.crons.create_for_thread("00000000-0000-0000-0000-000000000001", "simple", schedule="* * * * *")
    with pytest.raises(UnprocessableEntityError):
        client.crons.create("no-such-graph", schedule="* * * * *")


def test_search_count_sort_select(client: Any) -> None:
    from langgraph_sdk.errors import UnprocessableEntityError

    thread = client.threads.create()
    tid = thread["thread_id"]
    early = client.crons.create_for_thread(tid, "simple", schedule="0 0 1 1 *", metadata={"tag": "s"})
    late = client.crons.create_for_thread(tid, "simple", schedule="0 0 2 1 *", metadata={"tag": "s"},
                                          end_time=datetime.now(UTC) + timedelta(days=3000), enabled=False)
    hourly = client.crons.create("simple", schedule="0 * * * *", metadata={"tag": "s"})
    found = client.crons.search(thread_id=tid)
    assert [c["cron_id"] for c in found] == [late["cron_id"], early["cron_id"]]  # newest first
    soonest_first = sorted([hourly, early, late], key=lambda c: (c["next_run_date"], c["cron_id"]))
    assert soonest_first[-1] is late  # (ties, as hourly and early on 31 December, go by id)
    assert [c["cron_id"] for c in client.crons.search(metadata={"tag": "s"}, sort_by="next_run_date",
                                                      sort_order="asc")] == [c["cron_id"] for c in soonest_first]
    assert [c["cron_id"] for c in client.crons.search(thread_id=tid, enabled=False)] == [late["cron_id"]]
    assert client.crons.count(metadata={"tag": "s"}) == 3
    assert client.crons.count(thread_id=tid) == 2
    assert client.crons.count(assistant_id=SIMPLE, metadata={"tag": "s"}) == 3
    picked = client.crons.search(thread_id=tid, select=["cron_id", "enabled"], limit=1, offset=1)
    assert picked == [{"cron_id": early["cron_id"], "enabled": True}]
    with pytest.raises(UnprocessableEntityError, match="must be a UUID"):
        client.crons.search(assistant_id="simple")


def test_search_sends_pagination_headers(http: Any) -> None:
    r = http.post("/runs/crons/search", json={"limit": 1})
    assert r.status_code == 200
    assert int(r.headers["x-pagination-total"]) >= 1


def test_patch_reschedules_and_keeps_what_is_not_sent(client: Any) -> None:
    cron = client.crons.create("simple", schedule="0 0 1 1 *", input={"value": "x"},
                               end_time=datetime.now(UTC) + timedelta(days=5000))
    updated = client.crons.update(cron["cron_id"], schedule="30 9 * * *", timezone="America/New_York")
    assert updated["schedule"] == "30 9 * * *" and updated["payload"]["schedule"] == "30 9 * * *"
    assert updated["payload"]["input"] == {"value": "x"}
    local = _when(updated["next_run_date"]).astimezone(__import__("zoneinfo").ZoneInfo("America/New_York"))
    assert (local.hour, local.minute) == (9, 30)
    assert updated["end_time"] is not None
    cleared = client.crons.update(cron["cron_id"], end_time=None, enabled=False, input={"value": "y"},
                                  metadata={"m": 1})
    assert cleared["end_time"] is None and cleared["enabled"] is False
    assert cleared["payload"]["input"] == {"value": "y"} and cleared["metadata"] == {"m": 1}
    assert cleared["payload"]["config"]["configurable"]["cron_id"] == cron["cron_id"]
    kept = client.crons.update(cron["cron_id"], on_run_completed="keep")
    assert kept["on_run_completed"] == "keep" and kept["end_time"] is None


def test_delete_and_thread_delete(client: Any, http: Any) -> None:
    from langgraph_sdk.errors import NotFoundError

    cron = client.crons.create("simple", schedule="0 0 1 1 *")
    client.crons.delete(cron["cron_id"])
    with pytest.raises(NotFoundError):
        client.crons.delete(cron["cron_id"])
    assert http.get(f"/runs/crons/{cron['cron_id']}").status_code == 404
    thread = client.threads.create()
    on_thread = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *")
    assert http.get(f"/runs/crons/{on_thread['cron_id']}").json()["cron_id"] == on_thread["cron_id"]
    client.threads.delete(thread["thread_id"])
    assert http.get(f"/runs/crons/{on_thread['cron_id']}").status_code == 404


def test_deleting_an_assistant_deletes_its_crons(client: Any, http: Any) -> None:
    assistant = client.assistants.create("simple")
    cron = client.crons.create(assistant["assistant_id"], schedule="0 0 1 1 *")
    other = client.crons.create("simple", schedule="0 0 1 1 *")
    client.assistants.delete(assistant["assistant_id"])
    assert http.get(f"/runs/crons/{cron['cron_id']}").status_code == 404
    assert http.get(f"/runs/crons/{other['cron_id']}").status_code == 200


def test_due_thread_cron_fires_once_on_its_thread(server: RunningServer, client: Any) -> None:
    thread = client.threads.create()
    cron = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *",
                                          input={"value": "c"}, metadata={"who": "cron"})
    due = _when(cron["next_run_date"])
    _tick(server, due - timedelta(seconds=1))
    assert client.runs.list(thread["thread_id"]) == []
    started = _tick(server, due + timedelta(seconds=1))
    _tick(server, due + timedelta(seconds=2))  # the firing was claimed: no second run
    runs = _wait_runs(client, thread["thread_id"], 1)
    assert len(runs) == 1 and runs[0]["run_id"] in started and runs[0]["status"] == "success"
    assert runs[0]["metadata"]["cron_id"] == cron["cron_id"] and runs[0]["metadata"]["who"] == "cron"
    assert client.threads.get_state(thread["thread_id"])["values"]["value"] == "cab"
    moved = client.crons.search(thread_id=thread["thread_id"])[0]
    assert _when(moved["next_run_date"]) == due.replace(year=due.year + 1)


def test_stateless_cron_makes_a_thread_per_firing(server: RunningServer, client: Any) -> None:
    kept = client.crons.create("simple", schedule="0 0 1 1 *", input={"value": "k"}, on_run_completed="keep")
    dropped = client.crons.create("simple", schedule="0 0 1 1 *", input={"value": "d"})
    due = _when(kept["next_run_date"])
    started = _tick(server, due + timedelta(seconds=1))
    runs = [_on_server(server, server.ctx.runs.find(r)) for r in started]
    jobs = {run["metadata"]["cron_id"]: run for run in runs}
    assert {kept["cron_id"], dropped["cron_id"]} <= set(jobs)
    deadline = time.monotonic() + 20
    while any(_on_server(server, server.ctx.service.busy(jobs[c["cron_id"]]["thread_id"])) for c in (kept, dropped)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert jobs[kept["cron_id"]]["thread_id"] != jobs[dropped["cron_id"]]["thread_id"]
    kept_threads = client.threads.search(metadata={"cron_id": kept["cron_id"]})
    assert [t["thread_id"] for t in kept_threads] == [jobs[kept["cron_id"]]["thread_id"]]
    assert kept_threads[0]["values"]["value"] == "kab"
    assert client.threads.search(metadata={"cron_id": dropped["cron_id"]}) == []  # deleted after its run
    _tick(server, due.replace(year=due.year + 1) + timedelta(seconds=1))
    deadline = time.monotonic() + 20
    while len(client.threads.search(metadata={"cron_id": kept["cron_id"]})) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _doc(server: RunningServer, cron: dict[str, Any]) -> dict[str, Any]:
    return _on_server(server, server.ctx.crons.get(cron["cron_id"]))


def test_claim_is_won_once(server: RunningServer, client: Any) -> None:
    cron = client.crons.create("simple", schedule="0 0 1 1 *", enabled=False)
    doc = _doc(server, cron)
    now = _when(cron["next_run_date"]) + timedelta(seconds=1)

    async def race() -> list[bool]:
        return list(await asyncio.gather(*(server.ctx.crons.claim(dict(doc), now) for _ in range(5))))

    assert sorted(_on_server(server, race())) == [False, False, False, False, True]


def test_disabled_and_ended_crons_do_not_fire(server: RunningServer, client: Any) -> None:
    thread = client.threads.create()
    disabled = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *",
                                              enabled=False)
    soon = datetime.now(UTC) + timedelta(days=1)
    ended = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *", end_time=soon)
    assert ended["next_run_date"] is None  # the next firing would come after end_time
    _tick(server, _when(disabled["next_run_date"]) + timedelta(seconds=1))
    assert client.runs.list(thread["thread_id"]) == []
    enabled = client.crons.update(disabled["cron_id"], enabled=True)
    assert enabled["enabled"] is True and enabled["next_run_date"] is not None


def test_next_run_follows_the_time_zone_and_end_time() -> None:
    start = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)  # the US switches to summer time on 2026-03-08
    first = next_run("0 9 * * *", "America/New_York", start)
    second = next_run("0 9 * * *", "America/New_York", first)
    assert first == datetime(2026, 3, 7, 14, 0, tzinfo=UTC)  # 09:00 EST
    assert second == datetime(2026, 3, 8, 13, 0, tzinfo=UTC)  # 09:00 EDT
    assert next_run("0 9 * * *", None, start) == datetime(2026, 3, 8, 9, 0, tzinfo=UTC)
    assert next_run("0 9 * * *", None, start, end_time=datetime(2026, 3, 8, 8, 0, tzinfo=UTC)) is None
    assert next_run("0 9 * * *", None, start, end_time=datetime(2026, 3, 8, 9, 0, tzinfo=UTC)) is not None


def test_info_reports_crons(http: Any) -> None:
    assert http.get("/info").json()["flags"]["crons"] is True


def test_restart_fires_a_missed_firing_once(tmp_path: Path) -> None:
    """A firing due while the server was down is made once at start-up; the next start makes
    none (the claim moved the next run date on in the database)."""
    from langgraph_sdk import get_sync_client

    db = tmp_path / "db.sqlite"
    srv = start_server(db)
    try:
        client = get_sync_client(url=srv.url, api_key=None)
        thread = client.threads.create()
        cron = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="0 0 1 1 *",
                                              input={"value": "r"})
    finally:
        srv.stop()
    _move_next_run(db, cron["cron_id"], datetime.now(UTC) - timedelta(hours=1))
    for attempt in range(2):
        srv = start_server(db)
        try:
            client = get_sync_client(url=srv.url, api_key=None)
            runs = _wait_runs(client, thread["thread_id"], 1)
            assert _tick(srv, datetime.now(UTC)) == []
            assert len(client.runs.list(thread["thread_id"])) == 1, attempt
            assert _when(client.crons.search(thread_id=thread["thread_id"])[0]["next_run_date"]) > datetime.now(UTC)
        finally:
            srv.stop()
    assert runs[0]["status"] == "success"


def _move_next_run(db: Path, cron_id: str, when: datetime) -> None:
    """Set a stored cron's next run date (as a server that was down when it came would find it)."""
    from stepgraph.server.runtime.cronspec import utc_text
    from stepgraph.server.storage.sqlite import SqliteDocStore

    async def move() -> None:
        docs = SqliteDocStore(str(db))
        try:
            doc = await docs.get("cron", cron_id)
            assert doc is not None
            old, doc["next_run_date"] = doc["next_run_date"], utc_text(when.replace(microsecond=0))
            assert await docs.swap("cron", cron_id, doc, column="state_updated_at", expected=old)
        finally:
            await docs.close()

    asyncio.run(move())


@pytest.mark.slow
def test_every_minute_cron_is_seen_firing(client: Any) -> None:
    """``* * * * *`` fires on its own within the next minute (the scheduler sleeps until then)."""
    thread = client.threads.create()
    cron = client.crons.create_for_thread(thread["thread_id"], "simple", schedule="* * * * *",
                                          input={"value": "m"})
    runs = _wait_runs(client, thread["thread_id"], 1, timeout=75)
    assert runs[0]["metadata"]["cron_id"] == cron["cron_id"]
    client.crons.delete(cron["cron_id"])


def test_crons_under_custom_auth(tmp_path: Path) -> None:
    """With LangGraph's owner recipe (``auth_app``): a cron is stamped with its owner, hidden
    from others (404, left out of searches), and its firings run as the user who made it."""
    import sys

    from langgraph_sdk import get_sync_client
    from langgraph_sdk.errors import NotFoundError

    from stepgraph.server.auth import parse_auth_config

    app = Path(__file__).resolve().parent / "auth_app"
    sys_path = str(app)
    sys.path.insert(0, sys_path)
    try:
        srv = start_server(tmp_path / "db.sqlite", graphs={"whoami": "./graph.py:graph"}, base_dir=app,
                           auth=parse_auth_config({"path": "./auth.py:auth"}, app))
    finally:
        sys.path.remove(sys_path)
    try:
        alice = get_sync_client(url=srv.url, api_key=None, headers={"Authorization": "Bearer token-alice"})
        bob = get_sync_client(url=srv.url, api_key=None, headers={"Authorization": "Bearer token-bob"})
        thread = alice.threads.create()["thread_id"]
        cron = alice.crons.create_for_thread(thread, "whoami", schedule="0 0 1 1 *", input={})
        assert cron["user_id"] == "alice" and cron["metadata"]["owner"] == "alice"
        assert [c["cron_id"] for c in alice.crons.search()] == [cron["cron_id"]]
        assert bob.crons.search() == [] and bob.crons.count() == 0
        for call in (lambda: bob.crons.delete(cron["cron_id"]),
                     lambda: bob.crons.update(cron["cron_id"], enabled=False)):
            with pytest.raises(NotFoundError):
                call()
        with pytest.raises(NotFoundError):  # bob may not schedule runs on alice's thread
            bob.crons.create_for_thread(thread, "whoami", schedule="0 0 1 1 *")
        _tick(srv, _when(cron["next_run_date"]) + timedelta(seconds=1))
        _wait_runs(alice, thread, 1)
        who = alice.threads.get_state(thread)["values"]["who"]
        assert who["user_id"] == "alice" and who["permissions"] == ["threads:delete"]
    finally:
        srv.stop()
