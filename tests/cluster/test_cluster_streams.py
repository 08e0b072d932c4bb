"""Cluster streams across takeovers and thread deletes (smoke, default run).

- A worker SIGKILLed between a step's events and the step's commit: the step runs again on
  another worker; a client replaying the run's stream afterwards sees each committed
  step's events once (the killed execution's are skipped: ``cluster/cuts.py``), with ids
  strictly increasing, while a client that was live saw them at least once.
- Deleting a thread on one API process ends the v3 followers of that thread on the other.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from cluster_client import new_thread, sse, sse_events, wait_status
from cluster_harness import Cluster


def _holder_pid(cluster: Cluster, run_id: str, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while True:
        rows = cluster.sql("SELECT lease_owner FROM sg_run_queue WHERE run_id = %s AND status = 'running'", (run_id,))
        if rows and rows[0][0]:
            return int(rows[0][0].split(":")[1])
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)


def _steps(events: list[tuple[str, str, str | None]]) -> list[int]:
    return [json.loads(d)["step"] for e, d, _ in events if e == "custom"]


@pytest.mark.parametrize("mode", ["redis", "postgres-only"])
def test_kill_between_a_steps_events_and_its_commit(mode: str, request: pytest.FixtureRequest) -> None:
    c: Cluster = request.getfixturevalue("cluster" if mode == "redis" else "pg_cluster")
    api = c.add("api")
    c.add("worker")
    c.add("worker")
    tid = new_thread(api.url)
    steps = 6
    body = {"assistant_id": "g", "input": {"n": 0, "steps": steps, "sleep": 1.5, "mark": True},
            "stream_mode": ["custom", "updates"], "stream_resumable": True, "durability": "sync"}
    live: list[tuple[str, str, str | None]] = []
    killed = False
    with httpx.stream("POST", f"{api.url}/threads/{tid}/runs/stream", json=body, timeout=120) as r:
        for item in sse_events(r.iter_lines()):
            live.append(item)
            if not killed and _steps(live) == [0, 1, 2]:  # step 2 emitted, sleeping, not committed
                run_id = json.loads(live[0][1])["run_id"]
                victim = next(p for p in c.procs if p.pid == _holder_pid(c, run_id))
                c.kill(victim)
                killed = True
    assert killed
    run_id = json.loads(live[0][1])["run_id"]
    assert wait_status(api.url, tid, run_id) == "success"
    assert c.sql("SELECT attempt FROM sg_run_queue WHERE run_id = %s", (run_id,))[0][0] >= 2
    assert _steps(live).count(2) == 2 and sorted(set(_steps(live))) == list(range(steps))  # live: twice
    replay = sse(api.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": "0"})
    assert _steps(replay) == list(range(steps))  # each committed step's events once
    assert sum(1 for e in replay if e[0] == "updates") == steps
    keys = [tuple(int(x) for x in (i or "").split("-")) for _, _, i in replay]
    assert keys == sorted(set(keys))  # strictly increasing
    # a client that resumes from an id it got live, before the kill, continues gap-free
    before = next(i for e, d, i in live if e == "custom" and json.loads(d)["step"] == 1)
    rest = sse(api.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": before or ""})
    assert _steps(rest) == list(range(2, steps))


@pytest.mark.parametrize("mode", ["redis", "postgres-only"])
def test_thread_delete_ends_v3_followers_on_every_api_process(mode: str, request: pytest.FixtureRequest) -> None:
    c: Cluster = request.getfixturevalue("cluster" if mode == "redis" else "pg_cluster")
    a, b = c.add("api"), c.add("api")
    c.add("worker")
    tid = new_thread(a.url)
    ended: dict[str, float] = {}
    opened = threading.Barrier(3)

    def follow(name: str, url: str) -> None:
        with httpx.stream("POST", f"{url}/threads/{tid}/stream/events", json={"channels": ["lifecycle"]},
                          timeout=60) as resp:
            assert resp.status_code == 200
            opened.wait(30)
            for _ in resp.iter_bytes():
                pass
        ended[name] = time.monotonic()

    readers = [threading.Thread(target=follow, args=(n, u), daemon=True) for n, u in (("a", a.url), ("b", b.url))]
    for t in readers:
        t.start()
    opened.wait(30)
    time.sleep(0.5)
    r = httpx.delete(f"{a.url}/threads/{tid}", timeout=30)
    assert r.status_code in (200, 204), r.text
    for t in readers:
        t.join(30)
    assert sorted(ended) == ["a", "b"], f"followers still open: {sorted({'a', 'b'} - set(ended))}"
