#!/usr/bin/env python
"""Side-by-side benchmark of stepgraph vs LangGraph.

    .venv/bin/python benchmarks/run.py                 # everything
    .venv/bin/python benchmarks/run.py --quick         # fewer repetitions
    .venv/bin/python benchmarks/run.py --only fanout   # regex on workload names
    .venv/bin/python benchmarks/run.py --group core    # skip checkpointed ones

Every (workload, package) pair runs in a fresh subprocess: stepgraph with this
interpreter (or --stepgraph-python), LangGraph with benchmarks/.lgvenv/bin/python
(or --langgraph-python; create it with benchmarks/setup_langgraph.sh).  Results
of both runtimes are compared (canonical digest of the final state) before the
timings are trusted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_LG_PYTHON = os.path.join(HERE, ".lgvenv", "bin", "python")
PKGS = ("stepgraph", "langgraph")

sys.path.insert(0, HERE)
import workloads as W  # noqa: E402  (only the registry; no runtime imported here)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def worker_env(budget_s: float) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["SGBENCH_BUDGET_S"] = str(budget_s)
    env.pop("PYTHONSTARTUP", None)
    return env


def run_worker(
    python: str, name: str, pkg: str, repeat: int, quick: bool, budget_s: float, timeout: float
) -> dict:
    fd, out = tempfile.mkstemp(prefix=f"sgbench-{pkg}-{name}-", suffix=".json")
    os.close(fd)
    cmd = [
        python,
        os.path.join(HERE, "workloads.py"),
        "--worker",
        name,
        "--pkg",
        pkg,
        "--repeat",
        str(repeat),
        "--out",
        out,
    ]
    if quick:
        cmd.append("--quick")
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            cmd, env=worker_env(budget_s), cwd=HERE, capture_output=True, text=True, timeout=timeout
        )
        try:
            with open(out) as f:
                rep = json.load(f)
        except (OSError, ValueError):
            rep = {
                "status": "error",
                "reason": f"worker exited {p.returncode} without a report",
                "traceback": (p.stderr or "")[-3000:],
            }
    except subprocess.TimeoutExpired:
        rep = {"status": "error", "reason": f"timeout after {timeout:.0f}s"}
    finally:
        try:
            os.unlink(out)
        except OSError:
            pass
    rep["process_s"] = time.perf_counter() - t0
    return rep


def describe_python(python: str, pkg: str) -> str | None:
    code = (
        "import sys, importlib.metadata as m\n"
        f"try: v = m.version({pkg!r})\n"
        "except Exception: v = '?'\n"
        "print(v, sys.version.split()[0])\n"
    )
    try:
        p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    if p.returncode != 0:
        return None
    ver, pyver = p.stdout.split()
    return f"{pkg} {ver} on Python {pyver} ({python})"


def git_rev() -> str:
    try:
        p = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return p.stdout.strip() + ("+dirty" if dirty else "")
    except OSError:
        return "?"


def first_difference(a, b, path="$"):
    """Human-readable location of the first difference between two results."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {short(a)} != {type(b).__name__} {short(b)}"
    if isinstance(a, dict):
        ka, kb = set(a), set(b)
        if ka != kb:
            return (
                f"{path}: keys only in stepgraph {sorted(ka - kb)[:5]}, "
                f"only in langgraph {sorted(kb - ka)[:5]}"
            )
        for k in a:
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        return None
    if a != b:
        return f"{path}: {short(a)} != {short(b)}"
    return None


def short(x, n=120):
    s = json.dumps(x) if not isinstance(x, str) else repr(x)
    return s if len(s) <= n else s[: n - 3] + "..."


def fmt_ms(rep) -> str:
    if rep is None:
        return "—"
    if rep["status"] == "ok":
        v = rep["wall_median_ms"]
        if v < 1:
            return f"{v:.3f}"
        if v < 10:
            return f"{v:.2f}"
        return f"{v:.1f}" if v < 1000 else f"{v:,.0f}"
    return rep["status"]


def ratio(sg, lg, key) -> float | None:
    if sg and lg and sg.get("status") == "ok" and lg.get("status") == "ok" and sg[key] > 0:
        return lg[key] / sg[key]
    return None


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x"


def check_cell(name, sg, lg, notes) -> str:
    if not (sg and lg and sg.get("status") == "ok" and lg.get("status") == "ok"):
        return "—"
    if sg.get("digest") is None or lg.get("digest") is None:
        return "—"
    if sg["digest"] == lg["digest"]:
        return "same"
    diff = None
    if sg.get("result") is not None and lg.get("result") is not None:
        diff = first_difference(sg["result"], lg["result"])
    notes.append(f"**{name}**: results differ — {diff or 'digest mismatch'}")
    return "**DIFFERENT**"


def render(results: dict, names: list[str], have_lg: bool) -> str:
    lines: list[str] = []
    notes: list[str] = []
    failures: dict[tuple, list[str]] = {}
    groups = [("core", "Core workloads"), ("checkpointed", "Checkpointed workloads")]
    for group, title in groups:
        gnames = [n for n in names if W.WORKLOADS[n].group == group]
        if not gnames:
            continue
        lines.append(f"### {title}\n")
        if have_lg:
            lines.append(
                "| workload | stepgraph ms | langgraph ms | speedup (langgraph/stepgraph) "
                "| cpu speedup | result check |"
            )
            lines.append("|---|---:|---:|---:|---:|:---:|")
        else:
            lines.append("| workload | stepgraph ms | stepgraph cpu ms |")
            lines.append("|---|---:|---:|")
        speedups = []
        for n in gnames:
            sg = results[n].get("stepgraph")
            lg = results[n].get("langgraph")
            for pkg, rep in (("stepgraph", sg), ("langgraph", lg)):
                if rep and rep["status"] != "ok":
                    key = (pkg, rep["status"], rep.get("reason", ""))
                    failures.setdefault(key, []).append(n)
            if have_lg:
                r = ratio(sg, lg, "wall_median_ms")
                chk = check_cell(n, sg, lg, notes)
                if r is not None and chk != "**DIFFERENT**":  # mismatches don't count
                    speedups.append(r)
                lines.append(
                    f"| {n} | {fmt_ms(sg)} | {fmt_ms(lg)} | {fmt_ratio(r)} | "
                    f"{fmt_ratio(ratio(sg, lg, 'cpu_median_ms'))} | {chk} |"
                )
            else:
                cpu = f"{sg['cpu_median_ms']:.1f}" if sg and sg["status"] == "ok" else "—"
                lines.append(f"| {n} | {fmt_ms(sg)} | {cpu} |")
        if speedups:
            gm = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
            lines.append(
                f"\nGeometric-mean speedup ({title.lower()}, {len(speedups)} "
                f"workloads): **{fmt_ratio(gm)}**"
            )
        lines.append("")

    # extra metrics (storage size etc.)
    extra_rows = []
    for n in names:
        for pkg in PKGS:
            rep = results[n].get(pkg)
            if rep and rep.get("status") == "ok" and rep.get("extra"):
                kv = ", ".join(f"{k}={_fmt_extra(k, v)}" for k, v in rep["extra"].items())
                extra_rows.append(f"| {n} | {pkg} | {kv} |")
    if extra_rows:
        lines.append("### Extra metrics\n")
        lines.append("| workload | package | metrics |")
        lines.append("|---|---|---|")
        lines.extend(extra_rows)
        lines.append("")
    for (pkg, status, reason), ns in failures.items():
        reason = " ".join(reason.split())  # keep each note on one Markdown line
        notes.append(f"[{pkg}] **{status}** ({', '.join(ns)}): {reason}")
    if notes:
        lines.append("### Notes\n")
        lines.extend(f"- {x}" for x in notes)
        lines.append("")
    return "\n".join(lines)


def _fmt_extra(k, v):
    if isinstance(v, int) and k.endswith("bytes") and v >= 10_000:
        return f"{v:,} ({v / 2**20:.2f} MiB)"
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="regex matched against workload names (repeatable)",
    )
    ap.add_argument("--group", choices=["core", "checkpointed", "all"], default="all")
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="timed repetitions per workload after one warm-up "
        "(default 10, --quick 3); long workloads stop after a time budget",
    )
    ap.add_argument(
        "--quick", action="store_true", help="fewer repetitions, smaller time budget, 100-turn chat"
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds of timed runs per workload before stopping early "
        "(min 3 samples; default 4, --quick 1.5)",
    )
    ap.add_argument(
        "--packages",
        default="stepgraph,langgraph",
        help="comma-separated subset of stepgraph,langgraph",
    )
    ap.add_argument("--stepgraph-python", default=sys.executable)
    ap.add_argument("--langgraph-python", default=DEFAULT_LG_PYTHON)
    ap.add_argument("--timeout", type=float, default=300, help="per worker process, seconds")
    ap.add_argument("--json", metavar="PATH", help="also write raw results as JSON")
    ap.add_argument("--list", action="store_true", help="list workloads and exit")
    a = ap.parse_args(argv)

    if a.list:
        for w in W.WORKLOADS.values():
            print(f"{w.name:32s} [{w.group}] {w.description}")
        return 0

    repeat = a.repeat or (3 if a.quick else 10)
    budget = a.budget if a.budget is not None else (1.5 if a.quick else 4.0)
    names = [
        n
        for n, w in W.WORKLOADS.items()
        if (a.group == "all" or w.group == a.group)
        and (not a.only or any(re.search(p, n) for p in a.only))
    ]
    if not names:
        log("no workload matches")
        return 2

    wanted = [p.strip() for p in a.packages.split(",") if p.strip()]
    pythons = {"stepgraph": a.stepgraph_python, "langgraph": a.langgraph_python}
    header = ["# stepgraph vs LangGraph benchmark", ""]
    have = {}
    for pkg in wanted:
        desc = describe_python(pythons[pkg], pkg) if os.path.exists(pythons[pkg]) else None
        have[pkg] = desc is not None
        if desc:
            header.append(f"- {desc}" + (f", git {git_rev()}" if pkg == "stepgraph" else ""))
        elif pkg == "langgraph":
            header.append(
                f"- **LangGraph interpreter not found at {pythons[pkg]} — running "
                "stepgraph only** (create it with `bash benchmarks/setup_langgraph.sh` "
                "or pass `--langgraph-python`)"
            )
        else:
            header.append(f"- stepgraph interpreter {pythons[pkg]} not usable")
    header.append(
        f"- {repeat} timed repetitions after 1 warm-up (fewer for workloads that exceed "
        f"a {budget:g}s budget), median wall-clock ms; each workload in a fresh process"
        + (" [--quick]" if a.quick else "")
    )
    load = os.getloadavg()[0]
    ncpu = os.cpu_count() or 1
    header.append(
        f"- load average at start {load:.2f} on {ncpu} CPUs"
        + (
            " — **machine busy: wall times are inflated; compare the cpu speedup column**"
            if load > 0.5 * ncpu
            else ""
        )
    )
    header.append("")
    header.append("")
    run_pkgs = [p for p in wanted if have.get(p)]
    if not run_pkgs:
        log("no usable interpreter")
        return 2

    results: dict[str, dict] = {n: {} for n in names}
    t_start = time.perf_counter()
    for n in names:
        for pkg in run_pkgs:
            log(f"[{time.perf_counter() - t_start:6.1f}s] {n} / {pkg} ...")
            rep = run_worker(pythons[pkg], n, pkg, repeat, a.quick, budget, a.timeout)
            results[n][pkg] = rep
            if rep["status"] == "ok":
                log(
                    f"          {rep['wall_median_ms']:.2f} ms median "
                    f"({len(rep['wall_s'])} runs, process {rep['process_s']:.1f}s)"
                )
            else:
                log(f"          {rep['status']}: {rep.get('reason', '')}")
                if rep.get("traceback"):
                    log("          " + rep["traceback"].strip().replace("\n", "\n          "))
    total = time.perf_counter() - t_start

    print("\n".join(header) + render(results, names, have_lg="langgraph" in run_pkgs))
    print(f"_total benchmark time {total:.0f}s, load average at end {os.getloadavg()[0]:.2f}_")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"repeat": repeat, "quick": a.quick, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
