"""Thread TTL (``ttl`` of thread create/patch, ``checkpointer.ttl``), ``threads.prune`` with
``keep_latest`` and the ``extract`` of thread search, against a real server and the SDK."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from server_harness import RunningServer, start_server

from stepgraph.server.runtime.ttl import ThreadTtlPolicy, expired, ttl_record
from stepgraph.server.schemas.threads import ThreadTtl

FAST = 0.002  # minutes between sweeps (0.12 s)


@pytest.fixture(scope="module")
def ttl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    policy = ThreadTtlPolicy(sweep_interval_minutes=FAST)
    srv = start_server(tmp_path_factory.mktemp("ttl") / "db.sqlite", thread_ttl=policy)
    try:
        yield srv
    finally:
        srv.stop()


def _wait_for(check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def _gone(http: httpx.Client, thread_id: str) -> bool:
    return http.get(f"/threads/{thread_id}").status_code == 404


def test_expired_thread_is_deleted_with_its_runs_and_checkpoints(ttl_server: RunningServer) -> None:
    client = get_sync_client(url=ttl_server.url, api_key=None)
    short = client.threads.create(ttl={"strategy": "delete", "ttl": 0.005})
    keep = client.threads.create()
    for thread in (short, keep):
        client.runs.wait(thread["thread_id"], "simple", input={"value": ""})
    with httpx.Client(base_url=ttl_server.url) as http:
        _wait_for(lambda: _gone(http, short["thread_id"]))
        assert http.post(f"/threads/{short['thread_id']}/history", json={}).status_code == 404
        assert http.get(f"/threads/{short['thread_id']}/runs").status_code == 404
    assert client.threads.get_state(keep["thread_id"])["values"]["value"] == "ab"


def test_activity_moves_the_expiry(ttl_server: RunningServer) -> None:
    client = get_sync_client(url=ttl_server.url, api_key=None)
    thread = client.threads.create(ttl=0.05)  # 3 s after the last update
    for _ in range(4):
        time.sleep(1.0)
        client.threads.update(thread["thread_id"], metadata={"touched": time.time()})
        assert client.threads.get(thread["thread_id"])["thread_id"] == thread["thread_id"]


def test_keep_latest_keeps_the_thread_and_its_latest_checkpoint(ttl_server: RunningServer) -> None:
    client = get_sync_client(url=ttl_server.url, api_key=None)
    thread = client.threads.create()
    tid = thread["thread_id"]
    client.runs.wait(tid, "simple", input={"value": "x"})
    client.runs.wait(tid, "simple", input={"value": "y"})
    before = client.threads.get_history(tid, limit=100)
    assert len(before) > 1
    client.threads.update(tid, metadata={}, ttl={"strategy": "keep_latest", "ttl": 0.005})
    _wait_for(lambda: len(client.threads.get_history(tid, limit=100)) == 1)
    state = client.threads.get_state(tid)
    assert state["values"] == before[0]["values"]
    assert state["checkpoint"]["checkpoint_id"] == before[0]["checkpoint"]["checkpoint_id"]
    # the thread lives on and runs continue from the kept checkpoint
    out = client.runs.wait(tid, "simple", input={"value": "z"})
    assert out["steps"] == before[0]["values"]["steps"] + ["a", "b"]


def test_default_ttl_of_the_config_applies(tmp_path: Path) -> None:
    policy = ThreadTtlPolicy(default_minutes=0.005, sweep_interval_minutes=FAST)
    srv = start_server(tmp_path / "db.sqlite", thread_ttl=policy)
    try:
        client = get_sync_client(url=srv.url, api_key=None)
        thread = client.threads.create()
        with httpx.Client(base_url=srv.url) as http:
            _wait_for(lambda: _gone(http, thread["thread_id"]))
    finally:
        srv.stop()


def test_prune_keep_latest(server: RunningServer, client: Any) -> None:
    thread = client.threads.create()
    tid = thread["thread_id"]
    client.runs.wait(tid, "simple", input={"value": ""})
    client.runs.wait(tid, "simple", input={"value": ""})
    latest = client.threads.get_state(tid)
    with httpx.Client(base_url=server.url) as http:
        r = http.post("/threads/prune", json={"thread_ids": [tid], "strategy": "keep_latest"})
        assert r.status_code == 200 and r.json() == {"pruned_count": 1}
    history = client.threads.get_history(tid, limit=100)
    assert [h["checkpoint"]["checkpoint_id"] for h in history] == [latest["checkpoint"]["checkpoint_id"]]
    assert client.threads.get_state(tid)["values"] == latest["values"]


def test_search_extract(server: RunningServer, client: Any) -> None:
    tag = f"extract-{time.time()}"
    thread = client.threads.create(metadata={"tag": tag, "user": {"name": "ada"}})
    client.runs.wait(thread["thread_id"], "simple", input={"value": ""})
    found = client.threads.search(metadata={"tag": tag}, extract={
        "last_step": "values.steps[-1]", "first": "values.steps[0]", "who": "metadata.user.name",
        "missing": "values.nope[3].x", "out_of_range": "values.steps[9]"})
    assert found[0]["extracted"] == {"last_step": "b", "first": "a", "who": "ada", "missing": None,
                                     "out_of_range": None}
    picked = client.threads.search(metadata={"tag": tag}, select=["thread_id"],
                                   extract={"value": "values.value"})
    assert picked == [{"thread_id": thread["thread_id"], "extracted": {"value": "ab"}}]


@pytest.mark.parametrize("extract", [
    {"x": "values.__class__()"}, {"x": "values..a"}, {"x": "[0]"}, {"x": ""},
    {f"k{i}": "values" for i in range(11)}, {"x": 3},
])
def test_search_extract_refuses_bad_paths(http: httpx.Client, extract: dict[str, Any]) -> None:
    r = http.post("/threads/search", json={"extract": extract})
    assert r.status_code == 422, r.text


def test_ttl_record_and_expiry_rules() -> None:
    policy = ThreadTtlPolicy(strategy="keep_latest", default_minutes=10)
    assert ttl_record(None, ThreadTtlPolicy()) is None
    assert ttl_record(None, policy) == {"strategy": "keep_latest", "minutes": 10}
    assert ttl_record(5, policy) == {"strategy": "keep_latest", "minutes": 5.0}
    assert ttl_record(ThreadTtl(strategy="delete", ttl=2), policy) == {"strategy": "delete", "minutes": 2.0}
    assert ttl_record(ThreadTtl(strategy="delete"), policy) == {"strategy": "delete", "minutes": 10.0}
    now = datetime(2026, 1, 1, tzinfo=UTC)
    doc = {"thread_id": "t", "status": "idle", "updated_at": (now - timedelta(minutes=3)).isoformat(),
           "_ttl": {"strategy": "delete", "minutes": 2}}
    assert expired(doc, now) == "delete"
    assert expired({**doc, "status": "busy"}, now) is None
    assert expired({**doc, "_ttl": {"strategy": "delete", "minutes": 4}}, now) is None
    pruned = {**doc, "_ttl": {"strategy": "keep_latest", "minutes": 2}}
    assert expired(pruned, now) == "keep_latest"
    assert expired({**pruned, "_ttl_pruned": doc["updated_at"]}, now) is None
    assert expired({k: v for k, v in doc.items() if k != "_ttl"}, now) is None
