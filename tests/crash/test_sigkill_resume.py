"""Crash safety: SIGKILL a running graph at random moments, then resume it as a client would.

A child process (``_crash_worker.py``) runs a looping graph with a ``Send`` fan-out in every
round on the SQLite saver. The parent kills it with SIGKILL after a random delay, then, in
its own process, opens the same database file and reads ``get_state()``:

* no checkpoint at all: the input was never committed, so the client submits it again;
* ``next`` not empty: the client resumes with ``invoke(None, config)`` in a new child;
* ``next`` empty: the client considers the run finished.

This repeats until a child returns normally. After every kill the observed state must be
consistent (nothing committed earlier is lost, no write applied twice, every finished
round complete) and ``next`` must not be empty while work remains; at the end the state
must be exactly the expected one. Set ``STEPGRAPH_CRASH_SEED`` to replay a seed (the kill
moments still depend on timing, so a replay is likely, not certain, to hit the same case)
and ``STEPGRAPH_CRASH_KILLS`` to change the number of kills per test (default 40).

The campaign has a wall-clock budget (``STEPGRAPH_CRASH_BUDGET``, default 75 s): on a busy
machine every child starts slowly, so once the budget is spent the campaign ends after the
current thread, provided it made at least ``MIN_KILLS_UNDER_LOAD`` kills. The test's own
timeout is only a guard against a hang, so a loaded machine gives fewer kills, not a failure.
For the same reason a kill that left a thread's state where it was widens that thread's kill
window (up to ``MAX_KILL_WINDOW``), and a thread's last cycle is never killed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

WORKER = Path(__file__).with_name("_crash_worker.py")

_spec = importlib.util.spec_from_file_location("_stepgraph_crash_worker", WORKER)
assert _spec is not None and _spec.loader is not None
worker = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = worker  # the state schema's string annotations resolve in it
_spec.loader.exec_module(worker)

MIN_KILLS = int(os.environ.get("STEPGRAPH_CRASH_KILLS", "40"))
"""Kills per test (each followed by a state check and, usually, a resume); raise it with
``STEPGRAPH_CRASH_KILLS`` for a soak run."""
MIN_THREADS = 4
"""Threads per test; two threads share each database file."""
MAX_THREADS = max(16, MIN_KILLS)
MAX_CYCLES_PER_THREAD = 200
MAX_KILL_DELAY = 0.025
"""Kill after a uniform random delay in ``[0, MAX_KILL_DELAY]`` s after the child is ready
(a whole run takes ~0.08 s sync, ~0.12 s async, so a thread sees several kills)."""
CHILD_TIMEOUT = 60.0
BUDGET_S = float(os.environ.get("STEPGRAPH_CRASH_BUDGET", "75"))
"""Wall-clock seconds after which the campaign stops adding threads (see the module doc)."""
MIN_KILLS_UNDER_LOAD = max(1, min(MIN_KILLS, 10))
"""Kills a campaign must reach even when it ran out of budget."""
HANG_GUARD_S = 900
STALL_GROWTH = 1.5
"""A kill after which the thread's state did not move widens the kill window by this factor:
on a loaded machine a child may need longer than ``MAX_KILL_DELAY`` to commit one step."""
MAX_KILL_WINDOW = 3.0
"""The widest kill window (s); the last cycle of a thread is never killed."""


@dataclass
class Observation:
    """What the parent saw after one kill."""

    cycle: int
    delay_ms: float
    checkpoint: bool
    round: int | None = None
    items: list[tuple[int, int]] = field(default_factory=list)
    next: tuple[str, ...] = ()
    step: Any = None
    checkpoint_id: str | None = None
    tasks: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if not self.checkpoint:
            return f"cycle {self.cycle} (kill after {self.delay_ms:.1f} ms): no checkpoint"
        return (
            f"cycle {self.cycle} (kill after {self.delay_ms:.1f} ms): checkpoint "
            f"{self.checkpoint_id} step={self.step} round={self.round} "
            f"items={len(self.items)} next={self.next} tasks={self.tasks}"
        )


@dataclass
class ThreadStats:
    kills: int = 0
    resumes: int = 0
    fresh_restarts: int = 0
    finished_before_kill: int = 0


class Reader:
    """The parent's view of one database file: a saver on its own connection."""

    def __init__(self, db_path: str, mode: str) -> None:
        self.mode = mode
        if mode == "sync":
            from stepgraph.checkpoint.sqlite import SqliteSaver

            self.conn = sqlite3.connect(db_path, check_same_thread=False)
            self.saver = SqliteSaver(self.conn)
        else:
            from stepgraph.checkpoint.sqlite import connect
            from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            self.conn = connect(db_path)
            self.saver = AsyncSqliteSaver(self.conn)
        self.graph = worker.build_graph(use_async=mode == "async").compile(checkpointer=self.saver)

    def get_state(self, thread_id: str) -> Any:
        config = worker.config_for(thread_id)
        if self.mode == "sync":
            return self.graph.get_state(config)
        return asyncio.run(self.graph.aget_state(config))

    def close(self) -> None:
        self.conn.close()


def _spawn(
    db_path: str, thread_id: str, mode: str, start: str, seed: int, stderr: Any
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), db_path, thread_id, mode, start, str(seed)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], stderr: Any) -> tuple[str, str]:
    """Wait for ``proc``; its remaining stdout and its whole stderr.

    Read stdout through the same buffered file as the ``READY`` line (``communicate`` reads
    the raw pipe and would miss a ``DONE`` line already buffered with ``READY``).
    """
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    proc.wait(timeout=CHILD_TIMEOUT)
    stderr.seek(0)
    return out, stderr.read()


def _observe(snap: Any, cycle: int, delay: float) -> Observation:
    has_checkpoint = snap.metadata is not None
    obs = Observation(cycle, delay * 1000, has_checkpoint)
    if not has_checkpoint:
        return obs
    values = snap.values or {}
    obs.round = values.get("round")
    obs.items = [tuple(x) for x in values.get("items", [])]
    obs.next = tuple(snap.next)
    obs.step = (snap.metadata or {}).get("step")
    obs.checkpoint_id = snap.config["configurable"].get("checkpoint_id")
    obs.tasks = [f"{t.name}{'(done)' if t.result is not None else ''}" for t in snap.tasks]
    return obs


def _check_consistent(obs: Observation, previous: Observation | None, why: str) -> None:
    """Invariants of every observed state (``why`` prefixes failure messages)."""
    if not obs.checkpoint:
        assert previous is None or not previous.checkpoint, (
            f"{why}: the thread's checkpoints vanished; before: {previous.describe()}"
        )
        return
    R, K = worker.R, worker.K
    items, rnd = obs.items, obs.round
    if rnd is None:  # the input checkpoint: the input is still in __start__
        assert not items and obs.next == ("__start__",), (
            f"{why}: a checkpoint without 'round' must be the input checkpoint: {obs.describe()}"
        )
        assert previous is None or previous.round is None, (
            f"{why}: round went back to None (before: {previous.describe()})"
        )
        return
    assert isinstance(rnd, int) and 0 <= rnd <= R, f"{why}: bad round {rnd!r}"
    dupes = sorted({x for x in items if items.count(x) > 1})
    assert not dupes, (
        f"{why}: items {dupes} appear more than once: a task of a committed step was "
        "re-run or its writes were applied twice"
    )
    unknown = sorted(set(items) - set(worker.expected_items()))
    assert not unknown, f"{why}: unexpected items {unknown}"
    future = sorted(x for x in items if x[0] > rnd)
    assert not future, f"{why}: items {future} of rounds after round {rnd}"
    present = set(items)
    missing = sorted((r, k) for r in range(rnd) for k in range(K) if (r, k) not in present)
    assert not missing, (
        f"{why}: round is {rnd} but items {missing} of finished rounds are missing: "
        "committed writes were lost"
    )
    if previous is not None and previous.round is not None:
        lost = sorted(set(previous.items) - present)
        assert not lost, (
            f"{why}: items {lost} seen after an earlier kill are gone: committed writes "
            f"were lost (before: {previous.describe()})"
        )
        assert rnd >= previous.round, (
            f"{why}: round went back from {previous.round} to {rnd} (before: {previous.describe()})"
        )
    complete = rnd == R and sorted(items) == worker.expected_items()
    assert complete or obs.next, (
        f"{why}: get_state().next is empty while work remains (round {rnd} of {R}, "
        f"{len(items)} of {R * K} items): a client would never resume this thread; "
        f"observed {obs.describe()}"
    )
    if complete:
        assert not obs.next, f"{why}: run is complete but next is {obs.next}"


def _progress(obs: Observation) -> tuple[Any, ...]:
    """What a kill can have moved: the checkpoint and the writes saved against it."""
    return (obs.checkpoint_id, len(obs.items), tuple(obs.tasks))


def _run_thread(
    db_path: str, thread_id: str, mode: str, rng: random.Random, reader: Reader, tag: str
) -> tuple[ThreadStats, list[Observation]]:
    """Kill/inspect/resume ``thread_id`` until a child finishes; returns stats and history."""
    stats = ThreadStats()
    history: list[Observation] = []
    previous: Observation | None = None
    start = "fresh"
    window = MAX_KILL_DELAY
    for cycle in range(MAX_CYCLES_PER_THREAD):
        with tempfile.TemporaryFile("w+") as stderr:
            proc = _spawn(db_path, thread_id, mode, start, rng.randrange(1 << 30), stderr)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if line.strip() != "READY":
                proc.kill()
                _, err = _finish(proc, stderr)
                pytest.fail(f"{tag}: child did not start (got {line!r}): {err}")
            last = cycle == MAX_CYCLES_PER_THREAD - 1
            delay = CHILD_TIMEOUT if last else rng.uniform(0, window)
            try:
                proc.wait(timeout=delay)
                killed = False
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
            out, err = _finish(proc, stderr)
        why = (
            f"{tag} cycle {cycle} ({'killed' if killed else 'exited'} after {delay * 1000:.1f} ms)"
        )
        if killed and proc.returncode == -signal.SIGKILL:
            stats.kills += 1
            obs = _observe(reader.get_state(thread_id), cycle, delay)
            history.append(obs)
            _check_consistent(obs, previous, why)
            if previous is not None and _progress(previous) == _progress(obs):
                window = min(window * STALL_GROWTH, MAX_KILL_WINDOW)
            previous = obs
            if not obs.checkpoint:
                start = "fresh"
                stats.fresh_restarts += 1
            elif obs.next:
                start = "resume"
                stats.resumes += 1
            else:
                return stats, history  # complete (checked above): a client stops here
            continue
        assert proc.returncode == 0, f"{why}: child failed with {proc.returncode}: {err}"
        if not killed:
            stats.finished_before_kill += 1
        done = [ln for ln in out.splitlines() if ln.startswith("DONE ")]
        assert done, f"{why}: child exited 0 without a result: {out!r} {err!r}"
        result = json.loads(done[-1][5:])
        assert result["round"] == worker.R, f"{why}: invoke returned round {result['round']}"
        assert sorted(tuple(x) for x in result["items"]) == worker.expected_items(), (
            f"{why}: invoke returned wrong items {result['items']}"
        )
        obs = _observe(reader.get_state(thread_id), cycle, delay)
        history.append(obs)
        _check_consistent(obs, previous, f"{why}, final state")
        assert obs.round == worker.R and obs.next == (), f"{why}: final {obs.describe()}"
        return stats, history
    pytest.fail(f"{tag}: no child finished in {MAX_CYCLES_PER_THREAD} cycles")


def _seed() -> int:
    env = os.environ.get("STEPGRAPH_CRASH_SEED")
    return int(env) if env else random.SystemRandom().randrange(1 << 32)


def run_crash_campaign(tmp_path: Path, mode: str) -> dict[str, Any]:
    seed = _seed()
    print(f"crash test ({mode}): STEPGRAPH_CRASH_SEED={seed}")
    rng = random.Random(seed)
    totals = ThreadStats()
    readers: dict[str, Reader] = {}
    t0 = time.monotonic()
    threads = 0
    try:
        while threads < MAX_THREADS and (threads < MIN_THREADS or totals.kills < MIN_KILLS):
            over_budget = time.monotonic() - t0 > BUDGET_S
            if over_budget and threads >= 2 and totals.kills >= MIN_KILLS_UNDER_LOAD:
                break
            db_path = str(tmp_path / f"crash-{threads // 2}.db")
            reader = readers.get(db_path) or readers.setdefault(db_path, Reader(db_path, mode))
            thread_id = f"{mode}-thread-{threads}"
            tag = f"[seed {seed}, {mode}, {thread_id}, {Path(db_path).name}]"
            try:
                stats, history = _run_thread(db_path, thread_id, mode, rng, reader, tag)
            except BaseException:
                print(f"{tag} failed; STEPGRAPH_CRASH_SEED={seed}")
                raise
            for name in ("kills", "resumes", "fresh_restarts", "finished_before_kill"):
                setattr(totals, name, getattr(totals, name) + getattr(stats, name))
            threads += 1
    finally:
        for reader in readers.values():
            reader.close()
    summary = {
        "seed": seed,
        "threads": threads,
        "db_files": len(readers),
        "kills": totals.kills,
        "resumes": totals.resumes,
        "fresh_restarts": totals.fresh_restarts,
        "seconds": round(time.monotonic() - t0, 2),
        "load": round(os.getloadavg()[0], 2),
    }
    print(f"crash test ({mode}) summary: {summary}")
    wanted = MIN_KILLS if summary["seconds"] <= BUDGET_S else MIN_KILLS_UNDER_LOAD
    assert totals.kills >= wanted, f"only {totals.kills} kills (seed {seed}): {summary}"
    return summary


@pytest.mark.timeout(HANG_GUARD_S)
def test_sigkill_resume_sync(tmp_path: Path) -> None:
    """Sync driver on ``SqliteSaver``: state exact after every SIGKILL + resume."""
    run_crash_campaign(tmp_path, "sync")


@pytest.mark.timeout(HANG_GUARD_S)
def test_sigkill_resume_async(tmp_path: Path) -> None:
    """Async driver (``ainvoke``) on ``AsyncSqliteSaver``: same guarantees."""
    pytest.importorskip("stepgraph.checkpoint.sqlite.aio")
    run_crash_campaign(tmp_path, "async")
