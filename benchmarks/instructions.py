#!/usr/bin/env python
"""Instructions per run of a workload's timed part, counted by valgrind's callgrind.

CPU times on a shared virtual machine move by tens of percent between runs; instruction
counts do not. This counts what ``run`` costs: the instructions of a process that builds
the workload, warms it up and makes ``N`` runs (each after its untimed ``before``), minus
those of the same process that skips the runs, divided by ``N``.

    .venv/bin/python benchmarks/instructions.py chain_1000 cp_memory_chain_1000_exit
    .venv/bin/python benchmarks/instructions.py --pkg langgraph --runs 2 loop_1000
    .venv/bin/python benchmarks/instructions.py --idle-steps   # per-step cost vs idle nodes

``--idle-steps`` runs the idle-channel graph (``cp_memory_idle_*``) with 50 and with 200
steps beside 1000 and 2000 idle nodes: the difference over the 150 extra steps is the cost
of a step, free of the per-run costs (a restore makes every channel once).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

from run import DEFAULT_LG_PYTHON, HERE

_CHILD = r"""
import os, sys
sys.path.insert(0, {here!r})
import workloads as W
import workloads_shapes as S
pkg, runs, idle, steps = {pkg!r}, {runs!r}, {idle!r}, {steps!r}
if idle:  # the idle-channel workload's case, with ``steps`` steps
    builder = S.build_idle(W, pkg, idle)
    inp = {{"i": 0, "n": steps}}
    case = S._invoke_case(W, pkg, builder, inp, saver="memory", limit=steps * 2 + 10)
else:
    case = W.WORKLOADS[{name!r}].factory(pkg, False)
skip = os.environ.get("SGBENCH_SKIP_RUN") == "1"
for k in range(runs + 1):  # (the first is the warm-up, made in both processes)
    if case.before:
        case.before()
    if k == 0 or not skip:
        case.run()
"""


def _count(python: str, code: str, skip: bool) -> int:
    env = dict(os.environ, SGBENCH_SKIP_RUN="1" if skip else "0")
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=HERE,
        check=False,
    )
    m = re.search(r"refs:\s+([\d,]+)", p.stderr)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"callgrind failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def per_run(python: str, runs: int, **fields: object) -> float:
    """Instructions of one timed run (with the runs minus without them, over ``runs``)."""
    code = _CHILD.format(here=HERE, runs=runs, **fields)
    return (_count(python, code, False) - _count(python, code, True)) / runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("workloads", nargs="*", help="workload names (see run.py --list)")
    ap.add_argument("--pkg", default="stepgraph", choices=("stepgraph", "langgraph"))
    ap.add_argument("--runs", type=int, default=3, help="timed runs counted (default 3)")
    ap.add_argument("--python", help="interpreter (default: this one, or the LangGraph venv's)")
    ap.add_argument("--idle-steps", action="store_true", help="per-step cost vs idle nodes")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    python = a.python or (DEFAULT_LG_PYTHON if a.pkg == "langgraph" else sys.executable)
    if not a.workloads and not a.idle_steps:
        ap.error("name at least one workload, or --idle-steps")
    for name in a.workloads:
        n = per_run(python, a.runs, name=name, pkg=a.pkg, idle=0, steps=0)
        print(f"{name} [{a.pkg}]: {n / 1e6:.1f}M instructions per run")
    if a.idle_steps:
        for idle in (1000, 2000):
            kw = dict(name="", pkg=a.pkg, idle=idle)
            short = per_run(python, a.runs, steps=50, **kw)
            long = per_run(python, a.runs, steps=200, **kw)
            print(
                f"idle={idle} [{a.pkg}]: {short / 1e6:.1f}M per 50-step run, "
                f"{long / 1e6:.1f}M per 200-step run, {(long - short) / 150:,.0f} per step"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
