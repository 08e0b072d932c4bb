"""The cluster's code path on one SQLite file: ``stepgraph serve`` processes without cluster
flags (what ``stepgraph dev`` runs), killed, frozen and stormed like the cluster's workers.

Each test starts real processes on ``<tmp>/db.sqlite`` (``Cluster.add("sqlite")``) with
short leases (2 s) and reads the file directly to check the queue and the checkpoints.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from cluster_client import create, history, new_thread, sse, state, wait_status
from cluster_harness import Cluster

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")


@pytest.fixture
def lite(pg_cluster: Cluster) -> Cluster:
    """A directory for SQLite processes: the Postgres-only harness (it also makes a
    PostgreSQL schema, so it needs one), whose processes are started on a SQLite file."""
    return pg_cluster


def _sql(cluster: Cluster, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(cluster.tmp / "db.sqlite", timeout=30)
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def _forks(cluster: Cluster) -> list[tuple[Any, ...]]:
    return _sql(cluster, "SELECT thread_id, parent_checkpoint_id FROM sg_checkpoints WHERE checkpoint_ns = ''"
                         " AND parent_checkpoint_id IS NOT NULL GROUP BY thread_id, parent_checkpoint_id"
                         " HAVING COUNT(*) > 1")


def _wait_n(url: str, tid: str, at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (state(url, tid).get("values") or {}).get("n", 0) < at_least:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.05)


def test_a_sigkilled_process_is_resumed_exactly_by_the_next_start(lite: Cluster, tmp_path: Path) -> None:
    """The run continues from its last committed step: every step committed once, one
    idempotency key per step, a linear checkpoint chain, the final state of an uncrashed run."""
    keylog = tmp_path / "keys.log"
    proc = lite.add("sqlite")
    tid = new_thread(proc.url)
    inp = {"n": 0, "steps": 12, "sleep": 0.1, "keylog": str(keylog)}
    rid = create(proc.url, tid, inp, durability="sync").json()["run_id"]
    _wait_n(proc.url, tid, 4)
    lite.kill(proc)
    assert _sql(lite, "SELECT status FROM sg_run_queue WHERE run_id = ?", (rid,)) == [("running",)]
    proc = lite.add("sqlite")  # its reaper takes back the dead process's lease at once
    assert wait_status(proc.url, tid, rid, timeout=60) == "success"
    assert state(proc.url, tid)["values"]["n"] == 12
    run = httpx.get(f"{proc.url}/threads/{tid}/runs/{rid}", timeout=30).json()
    assert run["kwargs"]["config"]["metadata"]["run_attempt"] == 2
    assert _forks(lite) == []
    keys = keylog.read_text().split()
    assert len(set(keys)) == 12  # re-executed steps (if any) got the same key
    assert len(history(proc.url, tid)) == 14  # input, 12 steps, start: one chain


def test_a_replay_skips_the_events_of_a_step_a_killed_process_did_not_commit(lite: Cluster) -> None:
    """Commit tags and cuts on SQLite: the process is killed after a step's event and before
    its commit; the next start re-executes the step, and a replay shows each step once."""
    proc = lite.add("sqlite")
    tid = new_thread(proc.url)
    steps = 5
    inp = {"n": 0, "steps": steps, "sleep": 1.5, "mark": True}
    rid = create(proc.url, tid, inp, durability="sync", stream_mode=["custom", "updates"],
                 stream_resumable=True).json()["run_id"]
    deadline = time.monotonic() + 60
    while _sql(lite, "SELECT COUNT(*) FROM sg_run_events WHERE run_id = ? AND name = 'custom'", (rid,))[0][0] < 3:
        assert time.monotonic() < deadline, "step 2 never emitted its event"
        time.sleep(0.05)
    lite.kill(proc)  # step 2 is sleeping: its event is in the file, its commit is not
    proc = lite.add("sqlite")
    assert wait_status(proc.url, tid, rid, timeout=90) == "success"
    assert _sql(lite, "SELECT epoch, commits FROM sg_run_cuts WHERE run_id = ?", (rid,))[0][0] == 1
    customs = _sql(lite, "SELECT COUNT(*) FROM sg_run_events WHERE run_id = ? AND name = 'custom'", (rid,))[0][0]
    assert customs == steps + 1  # the killed execution's step-2 event is still stored
    replay = sse(proc.url, f"/threads/{tid}/runs/{rid}/stream", headers={"Last-Event-ID": "0"})
    assert [json.loads(d)["step"] for e, d, _ in replay if e == "custom"] == list(range(steps))
    keys = [tuple(int(x) for x in (i or "").split("-")) for _, _, i in replay]
    assert keys == sorted(set(keys))


def test_a_zombie_process_cannot_commit_after_another_took_its_run(lite: Cluster) -> None:
    """Two processes on one file: SIGSTOP the holder past its lease, the other one's reaper
    takes the run back and finishes it; SIGCONT: no write of the stale epoch is accepted."""
    procs = [lite.add("sqlite"), lite.add("sqlite")]
    tid = new_thread(procs[0].url)
    rid = create(procs[0].url, tid, {"n": 0, "steps": 40, "sleep": 0.1}, durability="sync").json()["run_id"]
    _wait_n(procs[0].url, tid, 3)
    owner = _sql(lite, "SELECT lease_owner FROM sg_run_queue WHERE run_id = ?", (rid,))[0][0]
    holder = next(p for p in procs if owner.split(":")[1] == str(p.pid))
    other = next(p for p in procs if p is not holder)
    os.killpg(holder.pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 60
        while _sql(lite, "SELECT lease_epoch FROM sg_run_queue WHERE run_id = ?", (rid,)) != [(2,)]:
            assert time.monotonic() < deadline, "the frozen holder's run was not taken over"
            time.sleep(0.1)
    finally:
        os.killpg(holder.pid, signal.SIGCONT)
    assert wait_status(other.url, tid, rid, timeout=90) == "success"
    time.sleep(1.0)  # the zombie woke up: whatever it tries is refused
    assert state(other.url, tid)["values"]["n"] == 40
    assert _forks(lite) == []
    assert _sql(lite, "SELECT status, lease_epoch FROM sg_run_queue WHERE run_id = ?", (rid,)) == [("done", 2)]
    assert httpx.get(f"{other.url}/threads/{tid}/runs/{rid}", timeout=30).json()["status"] == "success"
    assert holder.alive()


def _storm(url: str, tid: str, strategy: str, n: int, inp: dict[str, Any]) -> list[httpx.Response]:
    barrier = threading.Barrier(n)

    def one(_: int) -> httpx.Response:
        barrier.wait()
        return create(url, tid, inp, multitask_strategy=strategy)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_multitask_admission_on_sqlite(lite: Cluster) -> None:
    """``reject``/``enqueue``/``interrupt``/``rollback`` decided by the same admission
    transaction as the cluster's, on SQLite."""
    proc = lite.add("sqlite")
    url = proc.url
    tid = new_thread(url)
    answers = _storm(url, tid, "reject", 20, {"n": 0, "steps": 300, "sleep": 0.2})
    codes = sorted(r.status_code for r in answers)
    assert codes == [200] + [409] * 19
    accepted = next(r for r in answers if r.status_code == 200).json()["run_id"]
    httpx.post(f"{url}/threads/{tid}/runs/{accepted}/cancel?wait=true", timeout=60)

    tid = new_thread(url)
    answers = _storm(url, tid, "enqueue", 10, {"n": 0, "steps": 2, "sleep": 0.02})
    ids = [r.json()["run_id"] for r in answers]
    for rid in ids:
        assert wait_status(url, tid, rid) == "success"
    order = [r for (r,) in _sql(lite, "SELECT run_id FROM sg_run_queue WHERE thread_id = ? ORDER BY seq", (tid,))]
    runs = {r["run_id"]: r for r in httpx.get(f"{url}/threads/{tid}/runs?limit=100", timeout=30).json()}
    ends = [runs[r]["updated_at"] for r in order]
    assert ends == sorted(ends)  # one after the other, in admission order
    assert state(url, tid)["values"]["n"] == 2  # each run starts from its input

    tid = new_thread(url)
    first = create(url, tid, {"n": 0, "steps": 100, "sleep": 0.1}).json()["run_id"]
    _wait_n(url, tid, 1)
    second = create(url, tid, {"n": 0, "steps": 1}, multitask_strategy="interrupt").json()["run_id"]
    running_max = 0
    while _sql(lite, "SELECT 1 FROM sg_run_queue WHERE thread_id = ? AND status <> 'done'", (tid,)):
        running_max = max(running_max, _sql(lite, "SELECT COUNT(*) FROM sg_run_queue WHERE thread_id = ?"
                                                  " AND status = 'running'", (tid,))[0][0])
        time.sleep(0.02)
    assert running_max <= 1
    assert (wait_status(url, tid, first), wait_status(url, tid, second)) == ("interrupted", "success")

    tid = new_thread(url)
    first = create(url, tid, {"n": 0, "steps": 100, "sleep": 0.1}, durability="sync").json()["run_id"]
    _wait_n(url, tid, 2)
    second = create(url, tid, {"n": 0, "steps": 1}, multitask_strategy="rollback").json()["run_id"]
    assert wait_status(url, tid, second) == "success"
    assert httpx.get(f"{url}/threads/{tid}/runs/{first}", timeout=30).status_code == 404
    assert [h for h in history(url, tid) if (h.get("metadata") or {}).get("run_id") == first] == []
