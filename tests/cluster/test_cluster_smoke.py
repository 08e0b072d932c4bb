"""Cluster smoke tests: real API and worker processes on PostgreSQL and Redis (default run).

Each scenario is small (a few runs, one kill or one freeze); ``test_cluster_chaos.py`` has
the long versions behind the ``cluster`` marker.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from cluster_client import create, history, new_thread, sse, sse_events, state, wait_status
from cluster_harness import Cluster, checkpoint_forks


def _holder_pid(cluster: Cluster, run_id: str, timeout: float = 30) -> tuple[int, int]:
    """``(pid, epoch)`` of the worker holding ``run_id`` once it runs."""
    deadline = time.monotonic() + timeout
    while True:
        rows = cluster.sql("SELECT lease_owner, lease_epoch FROM sg_run_queue WHERE run_id = %s"
                           " AND status = 'running'", (run_id,))
        if rows and rows[0][0]:
            return int(rows[0][0].split(":")[1]), int(rows[0][1])
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)


def _epoch_counts(url: str, tid: str) -> dict[int, int]:
    counts: dict[int, int] = {}
    for snap in history(url, tid):
        epoch = (snap.get("metadata") or {}).get("lease_epoch")
        if epoch is not None:
            counts[epoch] = counts.get(epoch, 0) + 1
    return counts


def test_concurrent_start_on_a_fresh_database(cluster: Cluster) -> None:
    procs = [cluster.start(role, wait=False) for role in ("api", "worker", "worker")]
    for proc in procs:
        cluster.wait_ok(proc)
    assert all(p.alive() for p in procs)
    assert "UniqueViolation" not in "".join(p.log.read_text() for p in procs)


def test_runs_spread_over_workers_one_at_a_time_per_thread(cluster: Cluster) -> None:
    api = cluster.add("api")
    cluster.add("worker")
    cluster.add("worker")
    threads = [new_thread(api.url) for _ in range(6)]
    runs = []
    for tid in threads:
        for _ in range(2):
            r = create(api.url, tid, {"n": 0, "steps": 4, "sleep": 0.05}, multitask_strategy="enqueue")
            assert r.status_code == 200, r.text
            runs.append((tid, r.json()["run_id"]))
    for tid, rid in runs:
        assert wait_status(api.url, tid, rid) == "success"
    for tid in threads:
        assert state(api.url, tid)["values"]["n"] == 4
    # ``wait`` answers the final values from whichever worker ran it
    tid = new_thread(api.url)
    r = httpx.post(f"{api.url}/threads/{tid}/runs/wait", json={"assistant_id": "g", "input": {"n": 0, "steps": 3}},
                   timeout=60)
    assert r.json()["n"] == 3
    assert checkpoint_forks(cluster) == []
    owners = cluster.sql("SELECT COUNT(*) FROM sg_run_queue WHERE status <> 'done'")
    assert owners == [(0,)]


def test_worker_sigkill_runs_resume_on_another_worker(cluster: Cluster) -> None:
    api = cluster.add("api")
    cluster.add("worker")
    cluster.add("worker")
    threads = [new_thread(api.url) for _ in range(4)]
    logs = {tid: cluster.tmp / f"keys-{tid}.log" for tid in threads}
    # durability="sync": a step starts only once the checkpoint it starts from is stored, so
    # its key survives the kill (under "async" the newest checkpoint may die unstored with
    # the worker, and the step then re-runs from a re-created checkpoint with a new key)
    runs = [(tid, create(api.url, tid, {"n": 0, "steps": 15, "sleep": 0.1, "keylog": str(logs[tid])},
                         durability="sync").json()["run_id"]) for tid in threads]
    pid, _ = _holder_pid(cluster, runs[0][1])
    time.sleep(1.0)
    victim = next(p for p in cluster.procs if p.pid == pid)
    cluster.kill(victim)
    cluster.add("worker")
    executions = distinct = 0
    for tid, rid in runs:
        assert wait_status(api.url, tid, rid) == "success"
        assert state(api.url, tid)["values"]["n"] == 15
        # every execution of a step, the killed one included, had the key of the step that
        # committed: one key per step however often it executed
        keys = logs[tid].read_text().split()
        checkpoints = {s["checkpoint"]["checkpoint_id"] for s in history(api.url, tid)}
        assert len(set(keys)) == 15
        assert all(k.split(":")[0] == tid and k.split(":")[1] in checkpoints for k in keys)
        executions += len(keys)
        distinct += len(set(keys))
    assert executions > distinct  # the killed worker's steps executed again (at least once)
    assert checkpoint_forks(cluster) == []
    attempts = cluster.sql("SELECT MAX(attempt) FROM sg_run_queue")[0][0]
    assert attempts >= 2


def test_zombie_worker_cannot_commit_after_losing_its_lease(cluster: Cluster) -> None:
    api = cluster.add("api")
    cluster.add("worker")
    cluster.add("worker")
    tid = new_thread(api.url)
    rid = create(api.url, tid, {"n": 0, "steps": 12, "sleep": 0.25}).json()["run_id"]
    pid, epoch = _holder_pid(cluster, rid)
    time.sleep(0.6)
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 30
        while cluster.sql("SELECT lease_epoch FROM sg_run_queue WHERE run_id = %s", (rid,))[0][0] == epoch:
            assert time.monotonic() < deadline, "no other worker took the run over"
            time.sleep(0.1)
        time.sleep(2.5)  # the frozen worker's open transaction (if any) is ended by the server
        before = _epoch_counts(api.url, tid).get(epoch, 0)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert wait_status(api.url, tid, rid) == "success"
    time.sleep(2.0)  # room for the zombie to try its writes
    assert _epoch_counts(api.url, tid).get(epoch, 0) == before  # 0 stale writes accepted
    assert wait_status(api.url, tid, rid) == "success"  # final status not overwritten
    assert state(api.url, tid)["values"]["n"] == 12
    assert checkpoint_forks(cluster) == []


def test_reject_storm_across_api_processes_accepts_exactly_one(cluster: Cluster) -> None:
    apis = [cluster.add("api"), cluster.add("api")]
    cluster.add("worker")
    tid = new_thread(apis[0].url)
    barrier = threading.Barrier(20)

    def one(i: int) -> httpx.Response:
        barrier.wait()  # the accepted run outlasts the storm however loaded the machine; cancelled below
        return create(apis[i % 2].url, tid, {"n": 0, "steps": 300, "sleep": 0.2}, multitask_strategy="reject")

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(one, range(20)))
    codes = sorted(r.status_code for r in answers)
    for r in answers:
        if r.status_code == 200:
            httpx.post(f"{apis[0].url}/threads/{tid}/runs/{r.json()['run_id']}/cancel", timeout=60)
    assert codes == [200] + [409] * 19


@pytest.mark.parametrize("sync", [False, True], ids=["async-nodes", "sync-nodes"])
def test_cancel_from_another_api_process_stops_the_run(cluster: Cluster, sync: bool) -> None:
    a, b = cluster.add("api"), cluster.add("api")
    cluster.add("worker")
    tid = new_thread(a.url)
    rid = create(a.url, tid, {"n": 0, "steps": 200, "sleep": 0.1, "sync": sync}).json()["run_id"]
    _holder_pid(cluster, rid)
    time.sleep(0.5)
    r = httpx.post(f"{b.url}/threads/{tid}/runs/{rid}/cancel?wait=true", timeout=60)
    assert r.status_code in (200, 202, 204), r.text
    assert wait_status(b.url, tid, rid) == "interrupted"
    stopped_at = state(a.url, tid)["values"]["n"]
    assert stopped_at < 200
    time.sleep(0.5)
    assert state(a.url, tid)["values"]["n"] == stopped_at  # nothing of it runs any more
    # the thread is free: a new run starts at once
    nxt = create(b.url, tid, {"n": 0, "steps": 2}, multitask_strategy="reject")
    assert nxt.status_code == 200 and wait_status(a.url, tid, nxt.json()["run_id"]) == "success"


def test_last_event_id_replay_on_another_api_process(cluster: Cluster) -> None:
    a, b = cluster.add("api"), cluster.add("api")
    cluster.add("worker")
    tid = new_thread(a.url)
    body = {"assistant_id": "g", "input": {"n": 0, "steps": 8, "sleep": 0.1}, "stream_mode": ["updates"],
            "stream_resumable": True}
    first = sse(a.url, f"/threads/{tid}/runs/stream", method="POST", body=body, stop_after=3)
    run_id = json.loads(first[0][1])["run_id"]
    rest = sse(b.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": first[-1][2] or ""})
    ids = [e[2] for e in first + rest]
    keys = [tuple(int(x) for x in i.split("-")) for i in ids]
    assert keys == sorted(set(keys))  # strictly increasing: no gap in order, no duplicate
    everything = sse(b.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": "0"})
    assert [e[2] for e in everything] == ids
    assert sum(1 for e in everything if e[0] == "updates") == 8


def test_postgres_only_mode(pg_cluster: Cluster) -> None:
    api = pg_cluster.add("api")
    pg_cluster.add("worker")
    tid = new_thread(api.url)
    r = httpx.post(f"{api.url}/threads/{tid}/runs/wait", json={"assistant_id": "g", "input": {"n": 0, "steps": 3}},
                   timeout=60)
    assert r.json()["n"] == 3
    body = {"assistant_id": "g", "input": {"n": 0, "steps": 4, "sleep": 0.05}, "stream_mode": ["updates"],
            "stream_resumable": True}
    events = sse(api.url, f"/threads/{tid}/runs/stream", method="POST", body=body)
    assert [e[0] for e in events] == ["metadata"] + ["updates"] * 4
    run_id = json.loads(events[0][1])["run_id"]
    again = sse(api.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": events[1][2] or ""})
    assert [e[2] for e in again] == [e[2] for e in events[2:]]


def test_api_process_killed_mid_stream_client_resumes_on_the_other(cluster: Cluster) -> None:
    a, b = cluster.add("api"), cluster.add("api")
    cluster.add("worker")
    tid = new_thread(a.url)
    body = {"assistant_id": "g", "input": {"n": 0, "steps": 12, "sleep": 0.15}, "stream_mode": ["updates"],
            "stream_resumable": True}
    seen: list[tuple[str, str, str | None]] = []
    try:
        with httpx.stream("POST", f"{a.url}/threads/{tid}/runs/stream", json=body, timeout=60) as r:
            for item in sse_events(r.iter_lines()):
                seen.append(item)
                if len(seen) == 4:
                    cluster.kill(a)
    except httpx.HTTPError:
        pass  # the API process died under the stream
    assert 4 <= len(seen) < 13
    run_id = json.loads(seen[0][1])["run_id"]
    rest = sse(b.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": seen[-1][2] or ""})
    ids = [e[2] for e in seen + rest]
    everything = sse(b.url, f"/threads/{tid}/runs/{run_id}/stream", headers={"Last-Event-ID": "0"})
    assert ids == [e[2] for e in everything]  # no gap, no duplicate
    keys = [tuple(int(x) for x in i.split("-")) for i in ids]
    assert keys == sorted(set(keys))
    assert sum(1 for e in everything if e[0] == "updates") == 12


def test_poison_run_that_kills_its_workers_fails_after_max_attempts(cluster: Cluster) -> None:
    api = cluster.add("api")
    worker = cluster.add("worker")
    tid = new_thread(api.url)
    rid = create(api.url, tid, {"n": 0, "steps": 2, "poison": True}).json()["run_id"]
    deaths = 0
    deadline = time.monotonic() + 120
    while wait_status(api.url, tid, rid, timeout=120, done=("error", "success", "running", "pending")) != "error":
        if not worker.alive():
            deaths += 1
            worker = cluster.start("worker", wait=False)  # it may die before answering /ok
        assert time.monotonic() < deadline, "the poison run was never given up"
        time.sleep(0.2)
    run = httpx.get(f"{api.url}/threads/{tid}/runs/{rid}", timeout=30).json()
    assert run["error"]["error"] == "WorkerLostError"
    assert "without committing anything" in run["error"]["message"]
    assert 3 <= deaths <= 5
    if not worker.alive():
        worker = cluster.add("worker")
    healthy = new_thread(api.url)
    ok = create(api.url, healthy, {"n": 0, "steps": 2}).json()["run_id"]
    assert wait_status(api.url, healthy, ok) == "success"


def test_thread_stream_and_busy_checks_work_from_any_api_process(cluster: Cluster) -> None:
    a, b = cluster.add("api"), cluster.add("api")
    cluster.add("worker")
    tid = new_thread(a.url)
    first = create(a.url, tid, {"n": 0, "steps": 6, "sleep": 0.2}, stream_mode=["updates"]).json()["run_id"]
    _holder_pid(cluster, first)
    # B never saw this run: the busy check reads the queue, not B's memory
    r = httpx.post(f"{b.url}/threads/{tid}/state", json={"values": {"n": 99}}, timeout=30)
    assert r.status_code == 409, r.text
    got: list[tuple[str, str, str | None]] = []

    def follow() -> None:  # the thread's stream on B: the running run live, then the next one from its start
        with httpx.stream("GET", f"{b.url}/threads/{tid}/stream", params={"stream_mode": "updates"},
                          timeout=60) as resp:
            for item in sse_events(resp.iter_lines()):
                got.append(item)
                metas = [i for i, e in enumerate(got) if e[0] == "metadata"]
                if metas and sum(1 for e in got[metas[-1]:] if e[0] == "updates") == 3:
                    return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    time.sleep(1.0)
    second = create(a.url, tid, {"n": 0, "steps": 3}, multitask_strategy="enqueue",
                    stream_mode=["updates"]).json()["run_id"]
    reader.join(60)
    assert not reader.is_alive(), got
    assert wait_status(a.url, tid, second) == "success"
    metas = [json.loads(d)["run_id"] for e, d, _ in got if e == "metadata"]
    assert metas == [second]  # the later run from its start (its metadata first) ...
    assert got[0][0] == "updates"  # ... after the run that was running, followed live
    assert len(got) >= 5
    r = httpx.post(f"{b.url}/threads/{tid}/state", json={"values": {"n": 99}}, timeout=30)
    assert r.status_code == 200, r.text  # idle now: accepted


def _v3_events(url: str, tid: str, body: dict[str, object], terminals: int) -> list[dict[str, object]]:
    """The envelopes of ``/threads/{tid}/stream/events`` until ``terminals`` root completions."""
    out: list[dict[str, object]] = []
    with httpx.stream("POST", f"{url}/threads/{tid}/stream/events", json=body, timeout=60) as resp:
        assert resp.status_code == 200, resp.read()
        buf = ""
        for text in resp.iter_text():
            buf += text
            while "\r\n\r\n" in buf:
                block, buf = buf.split("\r\n\r\n", 1)
                for line in block.split("\r\n"):
                    if line.startswith("data: "):
                        out.append(json.loads(line[6:]))
            done = [e for e in out if e["method"] == "lifecycle" and not e["params"]["namespace"]  # type: ignore[index]
                    and e["params"]["data"].get("event") == "completed"]  # type: ignore[index, union-attr]
            if len(done) >= terminals:
                return out
    raise AssertionError(f"the stream ended early: {out}")


@pytest.mark.parametrize("mode", ["redis", "postgres-only"])
def test_v3_thread_log_is_one_log_across_processes(mode: str, request: pytest.FixtureRequest) -> None:
    c: Cluster = request.getfixturevalue("cluster" if mode == "redis" else "pg_cluster")
    a, b = c.add("api"), c.add("api")
    c.add("worker")
    c.add("worker")
    tid = new_thread(a.url)

    def start() -> str:
        r = httpx.post(f"{a.url}/threads/{tid}/commands", timeout=30, json={
            "id": 1, "method": "run.start", "params": {"assistant_id": "g", "input": {"n": 0, "steps": 3}}})
        assert r.status_code == 200 and r.json()["type"] == "success", r.text
        return str(r.json()["result"]["run_id"])

    every = {"channels": ["values", "updates", "messages", "tools", "custom", "lifecycle", "input", "tasks",
                          "checkpoints"]}
    first = start()
    log = _v3_events(b.url, tid, every, 1)  # read on B, written by a worker
    seqs = [int(e["seq"]) for e in log]  # type: ignore[call-overload]
    assert seqs == list(range(1, len(seqs) + 1))
    assert wait_status(a.url, tid, first) == "success"
    start()  # may execute on the other worker: its seq continue
    both = _v3_events(a.url, tid, every, 2)
    seqs2 = [int(e["seq"]) for e in both]  # type: ignore[call-overload]
    assert seqs2 == list(range(1, len(seqs2) + 1)) and len(seqs2) > len(seqs)
    assert [e["event_id"] for e in both[: len(log)]] == [e["event_id"] for e in log]  # same events everywhere
    tail = _v3_events(b.url, tid, {**every, "since": seqs[-1]}, 1)
    assert [int(e["seq"]) for e in tail] == seqs2[len(seqs):]  # type: ignore[call-overload]
