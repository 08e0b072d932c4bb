"""Restarting the shared services under load (``-m cluster``): Redis, and PostgreSQL itself.

The PostgreSQL scenario restarts the local server (``STEPGRAPH_TEST_PG_RESTART``, default
``pg_ctlcluster 15 main restart -m fast``): other users of that server see their
connections cut, so it runs only with the chaos marker, and skips when the command is not
available here. In both scenarios every run accepted before or during the outage finishes
``success`` with the right state, and once the service is back no request answers 5xx.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from cluster_client import create, new_thread, state, wait_status
from cluster_harness import Cluster, PrivateRedis, checkpoint_forks, unreachable

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(900)]

PG_RESTART = os.environ.get("STEPGRAPH_TEST_PG_RESTART", "pg_ctlcluster 15 main restart -m fast")
# leases long enough to outlast a restart (the lease is what a worker keeps across it)
RESTART_LEASE = {"STEPGRAPH_LEASE_TTL_S": "20", "STEPGRAPH_HEARTBEAT_S": "1", "STEPGRAPH_REAPER_S": "1"}


def _requests_after(url: str, runs: list[tuple[str, str]]) -> list[int]:
    """Status codes of a round of ordinary requests (creates, reads, searches)."""
    codes = []
    for _ in range(5):
        tid = new_thread(url)
        codes.append(create(url, tid, {"n": 0, "steps": 2}).status_code)
    for tid, rid in runs[:5]:
        codes.append(httpx.get(f"{url}/threads/{tid}/runs/{rid}", timeout=30).status_code)
        codes.append(httpx.get(f"{url}/threads/{tid}/state", timeout=30).status_code)
    codes.append(httpx.post(f"{url}/threads/search", json={"limit": 5}, timeout=30).status_code)
    codes.append(httpx.post(f"{url}/runs/wait", json={"assistant_id": "g", "input": {"n": 0, "steps": 1}},
                            timeout=60).status_code)
    return codes


def _start_load(cluster: Cluster, url: str, n: int) -> list[tuple[str, str]]:
    runs = []
    for _ in range(n):
        tid = new_thread(url)
        r = create(url, tid, {"n": 0, "steps": 20, "sleep": 0.15})
        assert r.status_code == 200, r.text
        runs.append((tid, r.json()["run_id"]))
    return runs


def _check_finished(cluster: Cluster, url: str, runs: list[tuple[str, str]]) -> tuple[int, int]:
    lost = wrong = 0
    for tid, rid in runs:
        if wait_status(url, tid, rid, timeout=180) != "success":
            lost += 1
        elif state(url, tid)["values"].get("n") != 20:
            wrong += 1
    return lost, wrong


@pytest.mark.parametrize("redis", [True, False], ids=["redis", "postgres-only"])
def test_postgres_restart_mid_load(tmp_path: Path, redis: bool) -> None:
    reason = unreachable(redis=redis)
    if reason:
        pytest.skip(reason)
    cmd = shlex.split(PG_RESTART)
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"cannot restart PostgreSQL here ({cmd[0]} not found; set STEPGRAPH_TEST_PG_RESTART)")
    cluster = Cluster(tmp_path, redis=redis, env=RESTART_LEASE)
    try:
        apis = [cluster.add("api"), cluster.add("api")]
        cluster.add("worker")
        cluster.add("worker")
        runs = _start_load(cluster, apis[0].url, 20)
        time.sleep(1.5)
        started = time.monotonic()
        subprocess.run(cmd, check=True, timeout=60, capture_output=True)
        down_s = time.monotonic() - started
        runs += _start_load(cluster, apis[1].url, 5)  # accepted right after the restart
        lost, wrong = _check_finished(cluster, apis[0].url, runs)
        codes = _requests_after(apis[0].url, runs) + _requests_after(apis[1].url, runs)
        alive = all(p.alive() for p in cluster.procs)
        forks = checkpoint_forks(cluster)
        print(f"\nCHAOS postgres-restart[{'redis' if redis else 'pg-only'}]: runs={len(runs)} lost={lost} "
              f"wrong_state={wrong} restart_s={down_s:.1f} 5xx_after={sum(c >= 500 for c in codes)} "
              f"forks={len(forks)} processes_alive={alive} counters={cluster.counters()}")
        assert (lost, wrong, forks, alive) == (0, 0, [], True)
        assert all(c < 500 for c in codes), codes
    finally:
        cluster.close()


def test_redis_restart_mid_load(tmp_path: Path) -> None:
    reason = unreachable(redis=True)
    if reason:
        pytest.skip(reason)
    redis = PrivateRedis(tmp_path)
    redis.start()
    cluster = Cluster(tmp_path, redis_url=redis.url)
    try:
        api = cluster.add("api")
        cluster.add("worker")
        cluster.add("worker")
        runs = _start_load(cluster, api.url, 20)
        time.sleep(1.0)
        redis.kill()
        time.sleep(2.0)
        during = []
        for _ in range(3):
            tid = new_thread(api.url)
            r = create(api.url, tid, {"n": 0, "steps": 20, "sleep": 0.15})
            during.append(r.status_code)
            if r.status_code == 200:
                runs.append((tid, r.json()["run_id"]))
        redis.start()
        lost, wrong = _check_finished(cluster, api.url, runs)
        codes = _requests_after(api.url, runs)
        print(f"\nCHAOS redis-restart: runs={len(runs)} lost={lost} wrong_state={wrong} "
              f"creates_while_down={during} 5xx_after={sum(c >= 500 for c in codes)}")
        assert (lost, wrong) == (0, 0)
        assert set(during) == {200} and all(c < 500 for c in codes), (during, codes)
    finally:
        cluster.close()
        redis.kill()
