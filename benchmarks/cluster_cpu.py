"""CPU per run of the cluster (issue 15): where the CPU of an I/O-bound run goes.

    .venv/bin/python benchmarks/cluster_cpu.py [--runs 200] [--workers 1] [--jobs 10] [--pg-only]
        [--profile DIR]   # py-spy flame graphs of the API and worker processes (py-spy installed)

Starts 1 API + N workers (``tests/cluster/cluster_harness.py``), creates ``--runs`` runs of
5 steps x 100 ms sleep on as many threads (16 client threads), waits for all, and prints
the CPU seconds each process used (``/proc/<pid>/stat``) divided by the runs: API, workers,
this client, and every ``postgres`` and ``redis-server`` process on the machine (those are
shared with anything else running, so read them on an idle machine). Production lease
timings (``cluster_bench.DEFAULT_LEASE``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cluster"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster_bench import DEFAULT_LEASE  # noqa: E402
from cluster_client import create, new_thread, wait_status  # noqa: E402
from cluster_harness import Cluster, unreachable  # noqa: E402

IO_RUN = {"n": 0, "steps": 5, "sleep": 0.1}
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its threads."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _pids(name: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def _total(name: str) -> float:
    return sum(_cpu(p) for p in _pids(name))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--pg-only", action="store_true")
    parser.add_argument("--profile", help="write py-spy flame graphs (svg) of the API and worker here")
    args = parser.parse_args()
    reason = unreachable(redis=not args.pg_only)
    if reason:
        print(f"skipped: {reason}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp), redis=not args.pg_only, jobs=args.jobs, env=DEFAULT_LEASE)
        try:
            api = cluster.add("api")
            workers = [cluster.add("worker") for _ in range(args.workers)]
            tids = [new_thread(api.url) for _ in range(args.runs)]
            procs = {"api": [api.pid], "worker": [w.pid for w in workers]}
            spies = []
            if args.profile:
                Path(args.profile).mkdir(parents=True, exist_ok=True)
                for role, pids in procs.items():
                    for pid in pids:
                        spies.append(subprocess.Popen(
                            [str(Path(sys.executable).with_name("py-spy")), "record", "-p", str(pid), "-r", "50",
                             "-o", f"{args.profile}/{role}-{pid}.txt", "-f", "raw", "--nonblocking", "--gil"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                time.sleep(1.0)
            before = {r: sum(_cpu(p) for p in pids) for r, pids in procs.items()}
            pg0, rd0, me0 = _total("postgres"), _total("redis-server"), time.process_time()
            load0 = os.getloadavg()[0]
            start = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                ids = list(pool.map(lambda t: (t, create(api.url, t, IO_RUN).json()["run_id"]), tids))
            for tid, rid in ids:
                wait_status(api.url, tid, rid, timeout=600)
            wall = time.perf_counter() - start
            after = {r: sum(_cpu(p) for p in pids) for r, pids in procs.items()}
            pg, rd, me = _total("postgres") - pg0, _total("redis-server") - rd0, time.process_time() - me0
            for spy in spies:
                spy.send_signal(2)
            for spy in spies:
                spy.wait(30)
        finally:
            cluster.close()
    n = args.runs
    print(f"{n} runs in {wall:.1f} s = {n / wall:.1f} runs/s; {os.cpu_count()} cores, load {load0:.1f} at start")
    print("| process | CPU ms per run |\n|---|---:|")
    rows = {**{r: after[r] - before[r] for r in procs}, "client (this process)": me, "postgres (all)": pg,
            "redis-server (all)": rd}
    for name, sec in rows.items():
        print(f"| {name} | {sec / n * 1000:.1f} |")
    print(f"| total | {sum(rows.values()) / n * 1000:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
