"""Cluster benchmark (issue 15): pickup latency and throughput of real processes.

    .venv/bin/python benchmarks/cluster_bench.py [--quick]

Needs PostgreSQL (and Redis) at 127.0.0.1 (``STEPGRAPH_TEST_PG`` / ``STEPGRAPH_TEST_REDIS``);
reuses ``tests/cluster/cluster_harness.py``. Figures:

- **pickup**: create-and-stream of a 1-step run with no sleep at half load (background runs
  of 5 x 100 ms keep half of the worker's slots busy), time from the request to the first
  ``updates`` event, p50/p99, with Redis and Postgres-only;
- **throughput**: runs of 5 steps x 100 ms sleep (I/O bound) per second with 1, 2 and 4
  workers (``--jobs`` each, default 4: on a shared 2-core machine, 4 workers x 10 jobs would
  make the runs CPU bound, and the figure would measure the CPU, not the queue), and the ratio
  to N x one worker;
- **split vs all-in-one**: the same load through 1 API + 1 worker, through one
  ``--role all`` cluster process, and through one process outside cluster mode (today's
  single process on the same PostgreSQL).

The processes run with the production lease timings (30 s lease, 10 s heartbeat, 15 s
reaper: ``DEFAULT_LEASE``), not the chaos tests' 2 s leases, whose heartbeats and reaper
rounds every 0.5 s are CPU a deployment does not spend. ``benchmarks/cluster_cpu.py`` says
where the CPU of a run goes, process by process.

Timings on a shared 2-core machine are noisy: read the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cluster"))

from cluster_client import create, new_thread, wait_status  # noqa: E402
from cluster_harness import Cluster, unreachable  # noqa: E402

IO_RUN = {"n": 0, "steps": 5, "sleep": 0.1}
DEFAULT_LEASE = {"STEPGRAPH_LEASE_TTL_S": "30", "STEPGRAPH_HEARTBEAT_S": "10", "STEPGRAPH_REAPER_S": "15"}


def _pickup(url: str, samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        tid = new_thread(url)
        body = {"assistant_id": "g", "input": {"n": 0, "steps": 1}, "stream_mode": ["updates"]}
        start = time.perf_counter()
        with httpx.stream("POST", f"{url}/threads/{tid}/runs/stream", json=body, timeout=60) as r:
            for line in r.iter_lines():
                if line.startswith("event: updates"):
                    out.append(time.perf_counter() - start)
                    break
    return out


def _background_load(url: str, stop: threading.Event, concurrency: int) -> list[threading.Thread]:
    """``concurrency`` clients each running one I/O-bound run after the other until ``stop``."""

    def loop() -> None:
        tid = new_thread(url)
        while not stop.is_set():
            try:
                rid = create(url, tid, IO_RUN).json()["run_id"]
                wait_status(url, tid, rid)
            except (httpx.HTTPError, AssertionError):
                if stop.is_set():
                    return
                time.sleep(0.2)

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    return threads


def pickup(redis: bool, samples: int, *, plain: bool | str = False) -> tuple[float, float]:
    """p50/p99 of create-to-first-step-event at half load: 1 API + 1 worker (``plain``: one
    process outside cluster mode, the reference; ``"sqlite"``: one process on a SQLite file)."""
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp), redis=redis, env=DEFAULT_LEASE)
        try:
            if plain:
                api = cluster.add("sqlite" if plain == "sqlite" else "plain")
            else:
                api = cluster.add("api")
                cluster.add("worker")
            stop = threading.Event()
            load = _background_load(api.url, stop, 5)  # half of the worker's 10 slots
            time.sleep(1.0)
            try:
                lat = sorted(_pickup(api.url, samples))
            finally:
                stop.set()
                for t in load:
                    t.join(30)
            return statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        finally:
            cluster.close()


def throughput(workers: int, runs: int, *, single: str | None = None, jobs: int = 4) -> float:
    """Runs per second through ``workers`` workers behind one API process, or through one
    process of role ``single`` (``all``: a one-process cluster; ``plain``: no cluster mode)."""
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp), redis=True, jobs=jobs, env=DEFAULT_LEASE)
        try:
            if single is not None:
                api = cluster.add(single)
            else:
                api = cluster.add("api")
                for _ in range(workers):
                    cluster.add("worker")
            tids = [new_thread(api.url) for _ in range(runs)]
            start = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                ids = list(pool.map(lambda t: (t, create(api.url, t, IO_RUN).json()["run_id"]), tids))
            for tid, rid in ids:
                wait_status(api.url, tid, rid, timeout=600)
            return runs / (time.perf_counter() - start)
        finally:
            cluster.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sqlite", action="store_true",
                        help="only the one-process SQLite figures (what `stepgraph dev` runs)")
    parser.add_argument("--jobs", type=int, default=4, help="runs per worker in the throughput figures")
    parser.add_argument("--skip-pickup", action="store_true", help="only the throughput figures")
    parser.add_argument("--rounds", type=int, default=2,
                        help="throughput rounds (1, 2, 4 workers each); the best of each is kept")
    args = parser.parse_args()
    reason = unreachable(redis=True)
    if reason:
        print(f"skipped: {reason}")
        return 0
    samples = 20 if args.quick else 100
    per_worker = (6 if args.quick else 20) * args.jobs
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("| measure | value |\n|---|---|")
    if args.sqlite:
        return _sqlite_figures(samples, per_worker, args)
    for label, redis, plain in () if args.skip_pickup else (
            ("Redis", True, False), ("Postgres-only", False, False), ("one process outside cluster mode", False, True)):
        p50, p99 = pickup(redis, samples, plain=plain)
        print(f"| pickup, {label} (create to first step event) "
              f"| p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms |", flush=True)
    best: dict[Any, float] = {}
    for _ in range(max(1, args.rounds)):  # interleaved, so a burst of load on the machine hits every size
        for key, workers, single in ((1, 1, None), (2, 2, None), (4, 4, None), ("all", 1, "all"),
                                     ("plain", 1, "plain")):
            rate = throughput(workers, per_worker * workers, single=single, jobs=args.jobs)
            best[key] = max(best.get(key, 0.0), rate)
    base = best[1]
    for n in (1, 2, 4):
        print(f"| throughput, {n} worker(s) x {args.jobs} jobs, 5 x 100 ms runs | {best[n]:.1f} runs/s "
              f"({best[n] / (n * base):.2f} x N x one) |")
    print(f"| 1 API + 1 worker / one `--role all` cluster process / one process outside cluster mode "
          f"| {best[1]:.1f} / {best['all']:.1f} / {best['plain']:.1f} runs/s |")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


def _sqlite_figures(samples: int, runs: int, args: argparse.Namespace) -> int:
    """Pickup and throughput of one process on a SQLite file (``stepgraph dev``'s path)."""
    p50, p99 = pickup(False, samples, plain="sqlite")
    print(f"| pickup, one process on SQLite (create to first step event) | p50 {p50 * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms |", flush=True)
    rate = max(throughput(1, runs, single="sqlite", jobs=args.jobs) for _ in range(max(1, args.rounds)))
    print(f"| throughput, one process on SQLite x {args.jobs} jobs, 5 x 100 ms runs | {rate:.1f} runs/s |")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
