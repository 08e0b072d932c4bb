#!/usr/bin/env python
"""HTTP throughput benchmark: ``stepgraph serve`` vs the real ``langgraph dev`` server.

Starts each server on a free loopback port (fresh temporary directory and database each),
waits for ``GET /ok``, warms up, then fires ``--runs`` short runs of the ``simple`` graph
(START -> a -> b -> END, input ``{"value": "x"}``) from ``--concurrency`` concurrent clients
and prints a Markdown table (server | runs/s | p50 ms | p99 ms | errors) plus the ratios.

Two modes are measured (``--modes``):

* ``stateless``: ``POST /runs/wait`` (a throw-away thread per run);
* ``stateful``:  ``POST /threads/{id}/runs/wait`` on one thread per client, created untimed
  before the measurement (so each client's runs on its own thread are sequential).

Both servers host exactly the same graph code: a tiny module written into each server's temp
directory that imports ``stepgraph`` or ``langgraph`` (the same ``simple`` graph as
``examples/server_graphs.py`` / the conformance graphs).  Servers are stopped at the end,
also on errors and Ctrl-C.  Only loopback traffic.

    bash benchmarks/setup_langgraph_dev.sh           # once: benchmarks/.lgdevvenv
    .venv/bin/python benchmarks/server_bench.py
    .venv/bin/python benchmarks/server_bench.py --postgres postgresql://127.0.0.1:5432/test
    .venv/bin/python benchmarks/server_bench.py --servers stepgraph --client sdk --runs 500
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_LG_VENV = HERE / ".lgdevvenv"
GRAPH_ID = "simple"
RUN_INPUT = {"value": "x"}
EXPECTED_VALUE = "xab"

GRAPH_MODULE = '''\
"""``simple`` (START -> a -> b -> END) for server_bench.py, importing {pkg}."""
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from {pkg}.config import get_stream_writer
from {pkg}.graph import END, START, StateGraph


class State(TypedDict, total=False):
    value: str
    steps: Annotated[list[str], operator.add]


def _a(state: State) -> dict[str, Any]:
    get_stream_writer()({{"node": "a", "value": state.get("value", "")}})
    return {{"value": state.get("value", "") + "a", "steps": ["a"]}}


def _b(state: State) -> dict[str, Any]:
    return {{"value": state.get("value", "") + "b", "steps": ["b"]}}


simple = (
    StateGraph(State)
    .add_node("a", _a)
    .add_node("b", _b)
    .add_edge(START, "a")
    .add_edge("a", "b")
    .add_edge("b", END)
    .compile(name="simple")
)
'''

# Environment for `langgraph dev`: no analytics / version check / LangSmith calls (loopback only).
LG_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING_V2": "false",
}
LG_UNSET = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY",
            "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT")


# ---------------------------------------------------------------------------------------------
# servers
# ---------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]




_LIVE: list[Server] = []  # servers to stop on exit, whatever happens


@dataclass
class Server:
    label: str
    kind: str  # "stepgraph" | "langgraph"
    argv: list[str]
    workdir: Path
    env: dict[str, str]
    port: int
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    pg_cleanup: Any = None  # callable dropping a temporary Postgres database
    notes: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float) -> None:
        self.log_path = self.workdir / "server.log"
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed with the process
        # A new session: the server (and any child it spawns) is one process group we can stop.
        self.proc = subprocess.Popen(self.argv, cwd=self.workdir, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        _LIVE.append(self)
        deadline = time.monotonic() + timeout
        last_err: str = ""
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.label}: server exited with code {self.proc.returncode} "
                                       f"before /ok answered\n{self.log_tail()}")
                try:
                    r = client.get(f"{self.url}/ok")
                    if r.status_code == 200:
                        return
                    last_err = f"HTTP {r.status_code}"
                except httpx.HTTPError as exc:
                    last_err = type(exc).__name__
                time.sleep(0.2)
        raise RuntimeError(f"{self.label}: /ok did not answer within {timeout:.0f}s ({last_err})\n{self.log_tail()}")

    def cpu_seconds(self) -> float | None:
        """user+system CPU of every process in the server's process group (Linux /proc)."""
        if self.proc is None or not Path("/proc").is_dir():
            return None
        pgid = self.proc.pid
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            # fields[0] = state (field 3); pgrp = field 5 -> fields[2]; utime/stime = fields 14/15
            if int(fields[2]) == pgid:
                total += int(fields[11]) + int(fields[12])
        return total / tick

    def log_tail(self, n: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join("    | " + line for line in lines[-n:])

    def stop(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.notes.append("did not exit within 15 s of SIGTERM; killed")
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
        if proc is not None:
            # stragglers left in the group (e.g. a worker child) after the leader exited
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self in _LIVE:
            _LIVE.remove(self)
        if self.pg_cleanup is not None:
            cleanup, self.pg_cleanup = self.pg_cleanup, None
            try:
                cleanup()
            except Exception as exc:  # noqa: BLE001
                print(f"warning: {self.label}: could not drop the temporary database: {exc}", file=sys.stderr)


def _stop_all() -> None:
    for server in list(_LIVE):
        try:
            server.stop()
        except Exception:  # noqa: BLE001
            traceback.print_exc()


atexit.register(_stop_all)


def _write_graph(workdir: Path, pkg: str) -> None:
    (workdir / "bench_graphs.py").write_text(GRAPH_MODULE.format(pkg=pkg), encoding="utf-8")


def _temporary_postgres(url: str) -> tuple[str, Any, str]:
    """A fresh database on the server of ``url`` (dropped by the returned callable).

    Falls back to ``url`` itself (shared, not emptied) when CREATE DATABASE is not allowed.
    """
    import psycopg
    from psycopg import sql

    name = f"sgbench_{os.getpid()}_{secrets.token_hex(3)}"
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except Exception as exc:  # noqa: BLE001
        return url, None, f"could not create a fresh database ({type(exc).__name__}: {exc}); using {url} as is"
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    fresh = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))

    def drop() -> None:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    return fresh, drop, f"fresh database {name} (dropped afterwards)"


def make_stepgraph(args: argparse.Namespace, backend: str) -> Server:
    workdir = Path(tempfile.mkdtemp(prefix=f"sgbench-stepgraph-{backend}-"))
    if args.stepgraph_config:
        config = Path(args.stepgraph_config).resolve()
    else:
        _write_graph(workdir, "stepgraph")
        config = workdir / "stepgraph.json"
        config.write_text(json.dumps({"graphs": {GRAPH_ID: "./bench_graphs.py:simple"}}), encoding="utf-8")
    port = free_port()
    server = Server(label=f"stepgraph ({backend})", kind="stepgraph", argv=[], workdir=workdir,
                    env=dict(os.environ), port=port)
    if backend == "sqlite":
        db = str(workdir / "stepgraph.sqlite")
    else:
        db, server.pg_cleanup, note = _temporary_postgres(args.postgres)
        server.notes.append(note)
    server.argv = [args.stepgraph_cmd, "serve", "--config", str(config), "--host", "127.0.0.1",
                   "--port", str(port), "--database-url", db, "--n-jobs-per-worker", str(args.n_jobs),
                   "--log-level", "warning"]
    return server


def make_langgraph(args: argparse.Namespace) -> Server:
    workdir = Path(tempfile.mkdtemp(prefix="sgbench-langgraph-dev-"))
    _write_graph(workdir, "langgraph")
    (workdir / "langgraph.json").write_text(json.dumps(
        {"dependencies": ["."], "graphs": {GRAPH_ID: "./bench_graphs.py:simple"}}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in LG_UNSET and not k.startswith("VIRTUAL_ENV")}
    env.update(LG_ENV)
    port = free_port()
    venv = Path(args.langgraph_venv)
    argv = [str(venv / "bin" / "langgraph"), "dev", "--host", "127.0.0.1", "--port", str(port),
            "--no-browser", "--no-reload", "--n-jobs-per-worker", str(args.n_jobs),
            "--server-log-level", "WARNING"]
    return Server(label="langgraph dev (inmem)", kind="langgraph", argv=argv, workdir=workdir, env=env,
                  port=port)


# ---------------------------------------------------------------------------------------------
# clients
# ---------------------------------------------------------------------------------------------
def _check_output(values: Any) -> str | None:
    if isinstance(values, dict) and "__error__" in values:
        return f"run error: {json.dumps(values['__error__'])[:200]}"
    if not isinstance(values, dict) or values.get("value") != EXPECTED_VALUE:
        return f"unexpected output: {json.dumps(values, default=str)[:200]}"
    return None


class HttpxClient:
    def __init__(self, url: str, timeout: float) -> None:
        self.http = httpx.AsyncClient(base_url=url, timeout=timeout, trust_env=False,
                                      limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))

    async def create_thread(self) -> str:
        r = await self.http.post("/threads", json={})
        r.raise_for_status()
        return r.json()["thread_id"]

    async def wait(self, thread_id: str | None) -> Any:
        path = "/runs/wait" if thread_id is None else f"/threads/{thread_id}/runs/wait"
        r = await self.http.post(path, json={"assistant_id": GRAPH_ID, "input": RUN_INPUT})
        if r.status_code >= 400:
            raise RuntimeError(f"HTTP {r.status_code}: {r.text[:200]}")
        return r.json()

    async def aclose(self) -> None:
        await self.http.aclose()


class SdkClient:
    def __init__(self, url: str, timeout: float) -> None:
        from langgraph_sdk import get_client

        self.client = get_client(url=url, api_key=None, timeout=httpx.Timeout(timeout))

    async def create_thread(self) -> str:
        return (await self.client.threads.create())["thread_id"]

    async def wait(self, thread_id: str | None) -> Any:
        return await self.client.runs.wait(thread_id, GRAPH_ID, input=RUN_INPUT)

    async def aclose(self) -> None:
        await self.client.aclose()


@dataclass
class Sample:
    latency_ms: float
    error: str | None


async def run_mode(url: str, mode: str, args: argparse.Namespace,
                   cpu: Any) -> tuple[list[Sample], float, float | None, list[str]]:
    """(samples, wall seconds, server CPU seconds, errors outside samples) of one timed round."""
    client_cls = SdkClient if args.client == "sdk" else HttpxClient
    clients = [client_cls(url, args.request_timeout) for _ in range(args.concurrency)]
    setup_errors: list[str] = []
    try:
        threads: list[str | None] = [None] * args.concurrency
        if mode == "stateful":
            threads = list(await asyncio.gather(*(c.create_thread() for c in clients)))

        # warm-up: a few runs per client, untimed
        async def warm(i: int) -> None:
            for _ in range(args.warmup):
                try:
                    await clients[i].wait(threads[i])
                except Exception as exc:  # noqa: BLE001
                    setup_errors.append(f"warm-up: {type(exc).__name__}: {exc}"[:300])
        await asyncio.gather(*(warm(i) for i in range(args.concurrency)))

        samples: list[Sample] = []
        next_index = 0

        async def worker(i: int) -> None:
            nonlocal next_index
            while next_index < args.runs:  # bounded: exactly args.runs requests in total
                next_index += 1
                t0 = time.perf_counter()
                try:
                    err = _check_output(await clients[i].wait(threads[i]))
                except Exception as exc:  # noqa: BLE001
                    err = f"{type(exc).__name__}: {exc}"[:300]
                samples.append(Sample((time.perf_counter() - t0) * 1000.0, err))

        cpu0 = cpu()
        t0 = time.perf_counter()
        tasks = [asyncio.ensure_future(worker(i)) for i in range(args.concurrency)]
        done, pending = await asyncio.wait(tasks, timeout=args.deadline)
        wall = time.perf_counter() - t0
        cpu1 = cpu()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            missing = args.runs - len(samples)
            setup_errors.append(f"deadline of {args.deadline:.0f}s hit: {missing} runs not completed")
            samples.extend(Sample(float("nan"), "not completed (deadline)") for _ in range(missing))
        for task in done:
            if task.exception() is not None:
                setup_errors.append(f"client crashed: {task.exception()!r}")
        cpu_s = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
        return samples, wall, cpu_s, setup_errors
    finally:
        await asyncio.gather(*(c.aclose() for c in clients), return_exceptions=True)


# ---------------------------------------------------------------------------------------------
# statistics / report
# ---------------------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100])."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass
class Result:
    server: str
    mode: str
    rounds: list[dict[str, Any]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: str | None = None

    @property
    def runs_per_s(self) -> float:
        rates = [r["ok"] / r["wall_s"] for r in self.rounds if r["wall_s"] > 0]
        return statistics.median(rates) if rates else float("nan")

    @property
    def cpu_ms_per_run(self) -> float | None:
        vals = [r["cpu_s"] * 1000.0 / r["n"] for r in self.rounds if r["cpu_s"] is not None and r["n"]]
        return statistics.median(vals) if vals else None

    def summary(self) -> dict[str, Any]:
        return {"server": self.server, "mode": self.mode, "runs_per_s": self.runs_per_s,
                "p50_ms": percentile(self.latencies_ms, 50), "p99_ms": percentile(self.latencies_ms, 99),
                "mean_ms": statistics.fmean(self.latencies_ms) if self.latencies_ms else float("nan"),
                "max_ms": max(self.latencies_ms, default=float("nan")),
                "server_cpu_ms_per_run": self.cpu_ms_per_run,
                "errors": len(self.errors), "failed": self.failed, "rounds": self.rounds}


def _fmt(x: float | None, digits: int = 1) -> str:
    if x is None or x != x:  # None / NaN
        return "–"
    return f"{x:,.{digits}f}"


def _load() -> tuple[float, float, float]:
    return os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3


def report(results: list[Result], args: argparse.Namespace, notes: list[str]) -> str:
    out: list[str] = []
    load0, load = args.load_start, _load()
    out.append(f"# Server benchmark: {args.runs} runs of `{GRAPH_ID}` x {args.repeat} round(s), "
               f"{args.concurrency} concurrent clients ({args.client}), n-jobs-per-worker {args.n_jobs}")
    out.append("")
    out.append(f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs, load average (1 min) {load0[0]:.2f} at start, {load[0]:.2f} at end; "
               "clients and server share the machine, servers run one after the other")
    if max(load0[0], load[0]) > (os.cpu_count() or 1) / 2:
        out.append("")
        out.append("**Warning: the machine was busy (load above half the CPU count); absolute numbers are "
                   "inflated by contention — compare ratios, and re-run on a quiet machine.**")
    out.append("")
    for mode in args.modes:
        rows = [r for r in results if r.mode == mode]
        if not rows:
            continue
        path = "POST /runs/wait" if mode == "stateless" else "POST /threads/{id}/runs/wait"
        out.append(f"## {mode}: `{path}`")
        out.append("")
        out.append("| server | runs/s | p50 ms | p99 ms | errors | server CPU ms/run |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            if r.failed:
                out.append(f"| {r.server} | – | – | – | failed: {r.failed} | – |")
                continue
            s = r.summary()
            out.append(f"| {r.server} | {_fmt(s['runs_per_s'])} | {_fmt(s['p50_ms'])} | {_fmt(s['p99_ms'])} "
                       f"| {s['errors']} | {_fmt(s['server_cpu_ms_per_run'])} |")
        lg = next((r for r in rows if r.server.startswith("langgraph") and not r.failed), None)
        if lg is not None:
            ls = lg.summary()
            out.append("")
            for r in rows:
                if r is lg or r.failed or not r.server.startswith("stepgraph"):
                    continue
                s = r.summary()
                out.append(f"* {r.server} vs {lg.server}: **{s['runs_per_s'] / ls['runs_per_s']:.2f}x** runs/s, "
                           f"p50 {ls['p50_ms'] / s['p50_ms']:.2f}x lower, p99 {ls['p99_ms'] / s['p99_ms']:.2f}x lower "
                           "(ratios > 1 favour stepgraph)")
        out.append("")
    error_lines = []
    for r in results:
        if r.errors:
            counts: dict[str, int] = {}
            for e in r.errors:
                counts[e] = counts.get(e, 0) + 1
            for e, n in sorted(counts.items(), key=lambda kv: -kv[1])[:10]:
                error_lines.append(f"* {r.server} / {r.mode}: {n} x `{e}`")
    if error_lines or notes:
        out.append("## Notes")
        out.append("")
        out.extend(f"* {n}" for n in notes)
        out.extend(error_lines)
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------
def bench_server(server: Server, args: argparse.Namespace, results: list[Result], notes: list[str]) -> None:
    mode_results = {m: Result(server.label, m) for m in args.modes}
    results.extend(mode_results.values())
    try:
        print(f"[{server.label}] starting on {server.url} (workdir {server.workdir})", file=sys.stderr)
        t0 = time.perf_counter()
        server.start(args.startup_timeout)
        notes.append(f"{server.label}: ready in {time.perf_counter() - t0:.1f}s on port {server.port}"
                     + "".join(f"; {n}" for n in server.notes))
        for rnd in range(args.repeat):
            for mode in args.modes:
                res = mode_results[mode]
                samples, wall, cpu_s, extra = asyncio.run(run_mode(server.url, mode, args, server.cpu_seconds))
                ok = [s.latency_ms for s in samples if s.error is None]
                res.latencies_ms.extend(ok)
                res.errors.extend(s.error for s in samples if s.error is not None)
                res.errors.extend(extra)
                res.rounds.append({"round": rnd, "n": len(samples), "ok": len(ok), "wall_s": wall, "cpu_s": cpu_s})
                print(f"[{server.label}] {mode} round {rnd + 1}/{args.repeat}: {len(ok)}/{len(samples)} ok in "
                      f"{wall:.2f}s ({len(ok) / wall if wall else 0:.1f} runs/s)", file=sys.stderr)
                if server.proc is not None and server.proc.poll() is not None:
                    raise RuntimeError(f"server exited (code {server.proc.returncode}) during the run\n"
                                       f"{server.log_tail()}")
    except Exception as exc:  # noqa: BLE001 - report and go on with the next server
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        for res in mode_results.values():
            if not res.rounds:
                res.failed = msg
        print(f"[{server.label}] FAILED: {exc}", file=sys.stderr)
    finally:
        server.stop()
        notes.extend(f"{server.label}: {n}" for n in server.notes if "killed" in n)
        log = server.log_path.read_text(errors="replace") if server.log_path and server.log_path.exists() else ""
        problems = [ln for ln in log.splitlines()
                    if any(w in ln for w in ("Traceback", "ERROR", "Error", "exception", "Exception"))]
        if problems:
            notes.append(f"{server.label}: server log has {len(problems)} error-like line(s), first: "
                         f"`{problems[0].strip()[:200]}` (log: {server.log_path})")
            args.keep_workdirs = True
        if not args.keep_workdirs:
            shutil.rmtree(server.workdir, ignore_errors=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=textwrap.dedent(__doc__.split("\n\n", 1)[1]))
    p.add_argument("--runs", type=int, default=200, help="timed runs per mode and round (default 200)")
    p.add_argument("--concurrency", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs per client before each mode (default 3)")
    p.add_argument("--repeat", type=int, default=1,
                   help="timed rounds per mode; runs/s is the median, latencies are pooled (default 1)")
    p.add_argument("--modes", default="stateless,stateful", help="stateless,stateful (default both)")
    p.add_argument("--servers", default="stepgraph,langgraph", help="stepgraph,langgraph (default both)")
    p.add_argument("--client", choices=("httpx", "sdk"), default="httpx",
                   help="raw httpx (one keep-alive connection per client) or the official langgraph_sdk "
                        "async client (default httpx)")
    p.add_argument("--postgres", metavar="URL",
                   help="also run stepgraph on PostgreSQL (a fresh temporary database is created on that "
                        "server and dropped afterwards; falls back to URL itself if CREATE DATABASE fails)")
    p.add_argument("--no-sqlite", action="store_true", help="skip stepgraph on SQLite (with --postgres)")
    p.add_argument("--n-jobs", type=int, default=10, help="--n-jobs-per-worker for both servers (default 10)")
    p.add_argument("--stepgraph-cmd", default=None,
                   help="stepgraph executable (default: next to this interpreter, else .venv/bin/stepgraph)")
    p.add_argument("--stepgraph-config", default=None,
                   help="serve this config (e.g. examples/stepgraph.json) instead of the generated one")
    p.add_argument("--langgraph-venv", default=str(DEFAULT_LG_VENV),
                   help=f"venv with langgraph-cli[inmem] (default {DEFAULT_LG_VENV.relative_to(REPO)}; "
                        "create it with benchmarks/setup_langgraph_dev.sh)")
    p.add_argument("--startup-timeout", type=float, default=120.0, help="seconds to wait for /ok (default 120)")
    p.add_argument("--request-timeout", type=float, default=60.0, help="per-request timeout s (default 60)")
    p.add_argument("--deadline", type=float, default=600.0, help="max seconds per timed round (default 600)")
    p.add_argument("--json", metavar="PATH", help="also write the summary numbers as JSON")
    p.add_argument("--keep-workdirs", action="store_true", help="keep the servers' temp dirs (logs, DBs)")
    args = p.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    bad = [m for m in args.modes if m not in ("stateless", "stateful")] + \
          [s for s in args.servers if s not in ("stepgraph", "langgraph")]
    if bad:
        p.error(f"unknown mode/server: {', '.join(bad)}")
    if args.runs < 1 or args.concurrency < 1 or args.repeat < 1 or args.warmup < 0:
        p.error("--runs, --concurrency, --repeat must be >= 1 and --warmup >= 0")
    if args.stepgraph_cmd is None:
        cand = Path(sys.executable).parent / "stepgraph"
        args.stepgraph_cmd = str(cand if cand.exists() else REPO / ".venv" / "bin" / "stepgraph")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.load_start = _load()

    def on_signal(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)

    servers: list[Any] = []  # factories, so temp dirs / ports are made right before each start
    notes: list[str] = []
    if "stepgraph" in args.servers:
        if not args.no_sqlite:
            servers.append(lambda: make_stepgraph(args, "sqlite"))
        if args.postgres:
            servers.append(lambda: make_stepgraph(args, "postgres"))
    if "langgraph" in args.servers:
        lg_bin = Path(args.langgraph_venv) / "bin" / "langgraph"
        if lg_bin.exists():
            servers.append(lambda: make_langgraph(args))
        else:
            notes.append(f"langgraph dev skipped: {lg_bin} not found (run benchmarks/setup_langgraph_dev.sh "
                         "or pass --langgraph-venv)")
    if args.client == "sdk":
        try:
            import langgraph_sdk  # noqa: F401
        except ImportError:
            print("error: --client sdk needs langgraph_sdk in this interpreter", file=sys.stderr)
            return 2

    results: list[Result] = []
    try:
        for factory in servers:
            bench_server(factory(), args, results, notes)
    except KeyboardInterrupt:
        print("interrupted; stopping servers", file=sys.stderr)
        _stop_all()
        return 130
    finally:
        _stop_all()

    print(report(results, args, notes))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": {k: v for k, v in vars(args).items()},
                                               "results": [r.summary() for r in results],
                                               "notes": notes}, indent=2, default=str), encoding="utf-8")
    failed = any(r.failed for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
