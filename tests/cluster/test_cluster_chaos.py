"""Long chaos scenarios of the cluster (``-m cluster``; sizes from the environment).

``STEPGRAPH_CHAOS_RUNS`` (default 200) runs of a ``STEPGRAPH_CHAOS_STEPS``-step graph (30; each step and branch sleeps
``STEPGRAPH_CHAOS_SLEEP`` s, 0.25: long enough for ~30 kills)
with a 3-way ``Send`` fan-out per step on half as many threads, while a random worker is
SIGKILLed every ``STEPGRAPH_CHAOS_KILL_S`` seconds (3) and restarted; ``STEPGRAPH_CHAOS_TRIALS``
(20) zombie and storm trials. Each test prints its figures (runs, kills, lost, stuck, stale
writes refused) on one ``CHAOS`` line.

Settle time (SIGKILL storm): the kills (at most ``STEPGRAPH_CHAOS_MAX_KILLS``, 40, at least
``STEPGRAPH_CHAOS_KILL_S`` apart) are paced by progress: the k-th waits until k/(max+1) of
the runs have started, so they spread over the whole load however fast the machine is,
and the last one comes when nearly every run has started. What is left after it is the
rest of the runs under way, plus the recovery of the last victim's runs (lease 2 s +
reaper 0.5 s, ``cluster_harness.LEASE``). A victim is a random worker up for at least
``STEPGRAPH_CHAOS_MIN_AGE_S`` (5) seconds. The scenario asserts that no run is unfinished 30 s after the
last kill (``STEPGRAPH_CHAOS_SETTLE_S``), read from the queue table every 0.25 s.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from cluster_client import HTTP, create, new_thread, state, wait_status
from cluster_harness import Cluster, checkpoint_forks
from test_cluster_smoke import _epoch_counts, _holder_pid

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(900)]

RUNS = int(os.environ.get("STEPGRAPH_CHAOS_RUNS", "200"))
STEPS = int(os.environ.get("STEPGRAPH_CHAOS_STEPS", "30"))
KILL_S = float(os.environ.get("STEPGRAPH_CHAOS_KILL_S", "3"))
TRIALS = int(os.environ.get("STEPGRAPH_CHAOS_TRIALS", "20"))
SLEEP = float(os.environ.get("STEPGRAPH_CHAOS_SLEEP", "0.25"))
MAX_KILLS = int(os.environ.get("STEPGRAPH_CHAOS_MAX_KILLS", "40"))
SETTLE_S = float(os.environ.get("STEPGRAPH_CHAOS_SETTLE_S", "30"))
MIN_AGE_S = float(os.environ.get("STEPGRAPH_CHAOS_MIN_AGE_S", "5"))


def _answers(url: str) -> bool:
    try:
        return HTTP.get(f"{url}/ok", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _expected_hits(steps: int, fan: int) -> list[str]:
    return sorted(f"{n}.{i}" for n in range(1, steps) for i in range(fan))


def test_worker_sigkill_storm(cluster: Cluster) -> None:
    apis = [cluster.add("api"), cluster.add("api")]
    workers = [cluster.add("worker") for _ in range(3)]
    with ThreadPoolExecutor(8) as pool:
        threads = list(pool.map(lambda _: new_thread(apis[0].url), range(max(1, RUNS // 2))))

        def submit(i: int) -> tuple[str, str]:
            tid = threads[i % len(threads)]
            r = create(apis[i % 2].url, tid, {"n": 0, "steps": STEPS, "fan": 3, "sleep": SLEEP},
                       multitask_strategy="enqueue")
            assert r.status_code == 200, r.text
            return tid, r.json()["run_id"]

        runs = list(pool.map(submit, range(RUNS)))
    kills = 0
    last_kill = time.monotonic()
    up_since: dict[int, float] = {}
    unstarted = "SELECT COUNT(*) FROM sg_run_queue WHERE attempt = 0 AND status <> 'done'"
    while (waiting := cluster.sql(unstarted)[0][0]) and kills < MAX_KILLS:
        time.sleep(KILL_S)
        if (RUNS - waiting) / RUNS < (kills + 1) / (MAX_KILLS + 1):
            continue  # paced by progress
        now = time.monotonic()
        for w in workers:
            if w.pid not in up_since and w.alive() and _answers(w.url):
                up_since[w.pid] = now
        # a worker still starting is not killed (it has no runs yet), nor one that just came up:
        # on a loaded machine its first claims would die before committing anything, and three
        # such executions in a row make a run look like a poison run (max_attempts)
        ready = [w for w in workers if w.alive() and now - up_since.get(w.pid, now) >= MIN_AGE_S]
        if ready:
            victim = random.choice(ready)
            cluster.kill(victim)
            last_kill = time.monotonic()
            kills += 1
            workers.remove(victim)
            workers.append(cluster.start("worker", wait=False))  # a kill every KILL_S, not per start-up
    backlog = cluster.sql("SELECT status, COUNT(*) FROM sg_run_queue WHERE status <> 'done' GROUP BY status")
    unfinished = "SELECT COUNT(*) FROM sg_run_queue WHERE status <> 'done'"
    while cluster.sql(unfinished)[0][0] and time.monotonic() - last_kill < SETTLE_S + 120:
        time.sleep(0.25)
    settled = time.monotonic() - last_kill  # the last run finished this long after the last kill
    lost = stuck = 0
    for tid, rid in runs:
        try:
            status = wait_status(apis[0].url, tid, rid, timeout=5)
        except AssertionError:
            stuck += 1
            continue
        if status != "success":
            lost += 1
            doc = httpx.get(f"{apis[0].url}/threads/{tid}/runs/{rid}", timeout=30).json()
            print("LOST", rid, status, doc.get("error"), cluster.sql(
                "SELECT attempt, lease_epoch FROM sg_run_queue WHERE run_id = %s", (rid,)))
    retried = cluster.sql("SELECT COUNT(*) FROM sg_run_queue WHERE attempt > 1")[0][0]
    per_thread = {}
    for tid in threads:
        values = state(apis[1].url, tid)["values"]
        per_thread[tid] = (values["n"], sorted(values.get("hits") or []))
    runs_per_thread = RUNS // len(threads)
    wrong = [t for t, (n, hits) in per_thread.items()
             if n != STEPS or hits != sorted(_expected_hits(STEPS, 3) * runs_per_thread)]
    forks = checkpoint_forks(cluster)
    counters = cluster.counters()
    print(f"\nCHAOS sigkill: runs={RUNS} kills={kills} lost={lost} stuck={stuck} wrong_state={len(wrong)} "
          f"forks={len(forks)} runs_retried={retried} settled_after_last_kill_s={settled:.1f} "
          f"backlog_at_last_kill={dict(backlog)} counters={counters}")
    assert (lost, stuck, wrong, forks) == (0, 0, [], [])
    assert settled <= SETTLE_S, f"runs still unfinished {settled:.1f} s after the last kill (backlog {dict(backlog)})"


def test_zombie_trials(cluster: Cluster) -> None:
    api = cluster.add("api")
    cluster.add("worker")
    cluster.add("worker")
    accepted = 0
    overwritten = 0
    void = 0
    for _ in range(TRIALS):
        tid = new_thread(api.url)
        rid = create(api.url, tid, {"n": 0, "steps": 10, "sleep": 0.2}).json()["run_id"]
        pid, epoch = _holder_pid(cluster, rid)
        time.sleep(random.uniform(0.2, 1.0))
        os.kill(pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 30
            row = cluster.sql("SELECT lease_epoch, status FROM sg_run_queue WHERE run_id = %s", (rid,))[0]
            while row[0] == epoch and row[1] != "done":
                assert time.monotonic() < deadline, cluster.sql("SELECT * FROM sg_run_queue WHERE run_id = %s", (rid,))
                time.sleep(0.1)
                row = cluster.sql("SELECT lease_epoch, status FROM sg_run_queue WHERE run_id = %s", (rid,))[0]
            if row[0] == epoch:  # the run finished before the freeze (a loaded machine): no zombie
                void += 1
                continue
            time.sleep(2.5)
            before = _epoch_counts(api.url, tid).get(epoch, 0)
        finally:
            os.kill(pid, signal.SIGCONT)
        wait_status(api.url, tid, rid)
        time.sleep(1.5)
        accepted += _epoch_counts(api.url, tid).get(epoch, 0) - before
        final = state(api.url, tid)
        if wait_status(api.url, tid, rid) != "success" or final["values"].get("n") != 10:
            overwritten += 1
            print("ZOMBIE MISMATCH", tid, rid, final)
    counters = cluster.counters()
    print(f"\nCHAOS zombie: trials={TRIALS} void={void} stale_accepted={accepted} overwritten={overwritten} "
          f"counters={counters}")
    assert (accepted, overwritten) == (0, 0)
    assert void <= TRIALS // 4, f"{void} of {TRIALS} runs finished before their worker was frozen"
    assert checkpoint_forks(cluster) == []


def test_multitask_storms(cluster: Cluster) -> None:
    apis = [cluster.add("api"), cluster.add("api")]
    cluster.add("worker")
    cluster.add("worker")
    n = 50

    def storm(strategy: str, tid: str) -> list[httpx.Response]:
        barrier = threading.Barrier(n)

        def one(i: int) -> httpx.Response:
            barrier.wait()
            # the run a reject storm accepts outlasts the storm however loaded the machine (it
            # is cancelled afterwards): a second 200 then means two runs admitted at once
            inp = {"n": 0, "steps": 300, "sleep": 0.2} if strategy == "reject" else {"n": 0, "steps": 3, "sleep": 0.05}
            return create(apis[i % 2].url, tid, inp, multitask_strategy=strategy)

        with ThreadPoolExecutor(n) as pool:
            return list(pool.map(one, range(n)))

    bad_reject = 0
    for _ in range(TRIALS):
        tid = new_thread(apis[0].url)
        answers = storm("reject", tid)
        codes = sorted(r.status_code for r in answers)
        if codes != [200] + [409] * (n - 1):
            bad_reject += 1
            print("REJECT STORM", tid, {c: codes.count(c) for c in set(codes)},
                  [r.text[:200] for r in answers if r.status_code not in (200, 409)][:3])
        for r in answers:
            if r.status_code == 200:
                httpx.post(f"{apis[0].url}/threads/{tid}/runs/{r.json()['run_id']}/cancel", timeout=60)
    tid = new_thread(apis[0].url)
    answers = storm("enqueue", tid)
    assert all(r.status_code == 200 for r in answers)
    ids = [r.json()["run_id"] for r in answers]
    for rid in ids:
        assert wait_status(apis[0].url, tid, rid) == "success"
    rows = cluster.sql("SELECT run_id, seq FROM sg_run_queue WHERE thread_id = %s ORDER BY seq", (tid,))
    runs = httpx.get(f"{apis[0].url}/threads/{tid}/runs?limit=100", timeout=30).json()
    spans = {r["run_id"]: (r["created_at"], r["updated_at"]) for r in runs}
    order = [rid for rid, _ in rows]
    overlaps = sum(1 for a, b in zip(order, order[1:], strict=False) if spans[b][1] < spans[a][1])
    tid = new_thread(apis[0].url)
    storm("interrupt", tid)
    running_max = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = cluster.sql("SELECT COUNT(*) FROM sg_run_queue WHERE thread_id = %s AND status = 'running'",
                              (tid,))[0][0]
        running_max = max(running_max, running)
        if not cluster.sql("SELECT 1 FROM sg_run_queue WHERE thread_id = %s AND status <> 'done'", (tid,)):
            break
        time.sleep(0.05)
    print(f"\nCHAOS storm: trials={TRIALS} reject_bad={bad_reject} enqueue_out_of_order={overlaps} "
          f"interrupt_max_running={running_max}")
    assert (bad_reject, overlaps, running_max <= 1) == (0, 0, True)
