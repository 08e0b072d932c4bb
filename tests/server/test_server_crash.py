"""A ``stepgraph serve`` process killed with SIGKILL while a run executes, then restarted.

Regression of issue 10 (section 3): such runs were marked ``error`` with no message and
``join`` answered 200 with the partial values. Now a run that committed steps is queued again
at start-up and continues from its last checkpoint (its input is not applied again, the
steps it committed do not run again), until ``max_attempts`` executions in a row committed
no step; then it fails with
``worker lost: server restarted`` in the run's and the thread's ``error``, in ``join``
(``__error__``) and in ``join_stream`` (an ``error`` event). A run that committed nothing is
run again from its input. On SQLite and on PostgreSQL (a fresh schema; skipped when
PostgreSQL is unreachable).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from runtime_support import wait_until, within

from stepgraph.server.runtime.recovery import WORKER_LOST

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

GRAPHS = Path(__file__).with_name("crash_graphs.py")
PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_unreachable() -> str | None:
    try:
        import psycopg

        psycopg.connect(PG_BASE, connect_timeout=2).close()
    except Exception as exc:  # noqa: BLE001 - ImportError or any connection failure
        return f"PostgreSQL not reachable at {PG_BASE}: {exc}"
    return None


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A SQLite file, or a fresh PostgreSQL schema (dropped afterwards)."""
    if request.param == "sqlite":
        yield str(tmp_path / "db.sqlite")
        return
    reason = _pg_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"sg_crash_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


class Serve:
    """``stepgraph serve`` in a subprocess on a free loopback port."""

    def __init__(self, work: Path, database_url: str, env: dict[str, str] | None = None) -> None:
        config = work / "stepgraph.json"
        config.write_text(json.dumps({"graphs": {"durable": f"{GRAPHS}:durable"}}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.output = work / f"serve-{port}.log"
        self._out = open(self.output, "wb")  # noqa: SIM115 - closed in stop()/kill()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stepgraph.cli", "serve", "--config", str(config), "--port", str(port),
             "--database-url", database_url, "--log-level", "warning"],
            stdout=self._out, stderr=subprocess.STDOUT,
            env={**os.environ, "STEPGRAPH_CRASH_DIR": str(work), **(env or {})},
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"stepgraph serve exited: {self.output.read_text()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"stepgraph serve did not start: {self.output.read_text()}")
            time.sleep(0.05)
        from langgraph_sdk import get_sync_client

        self.client = get_sync_client(url=self.url, api_key=None)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._out.close()


def _nodes(work: Path) -> list[str]:
    path = work / "nodes.log"
    return path.read_text().split() if path.exists() else []


def _blocked_times(work: Path, n: int) -> None:
    wait_until(lambda: _nodes(work).count("b-start") >= n, f"node b starting (time {n})")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "block").touch()
    return tmp_path


def test_killed_run_resumes_from_its_last_checkpoint(work: Path, database_url: str) -> None:
    srv = Serve(work, database_url)
    try:
        c = srv.client
        tid = c.threads.create()["thread_id"]
        first = c.runs.create(tid, "durable", input={"steps": ["input"]}, durability="sync")
        second = c.runs.create(tid, "durable", input={"steps": ["second"]}, multitask_strategy="enqueue")
        _blocked_times(work, 1)
    finally:
        srv.kill()
    assert _nodes(work) == ["a", "b-start"]
    (work / "block").unlink()
    srv = Serve(work, database_url)
    try:
        c = srv.client
        out = within(lambda: c.runs.join(tid, first["run_id"]), "joining the resumed run")
        assert out == {"steps": ["input", "a", "b", "c"]}  # the input once, `a` not again
        run = c.runs.get(tid, first["run_id"])
        assert run["status"] == "success"
        assert run["kwargs"]["config"]["metadata"]["run_attempt"] == 2
        out = within(lambda: c.runs.join(tid, second["run_id"]), "joining the run queued behind it")
        assert out == {"steps": ["input", "a", "b", "c", "second", "a", "b", "c"]}
        assert c.runs.get(tid, second["run_id"])["status"] == "success"
        assert c.threads.get(tid)["status"] == "idle"
        # the first run's `a` ran once; its `b` started twice (cut by the kill, then again)
        assert _nodes(work) == ["a", "b-start", "b-start", "b-end", "c", "a", "b-start", "b-end", "c"]
    finally:
        srv.stop()


def test_run_lost_too_often_fails_with_a_clear_error(work: Path, database_url: str) -> None:
    """``max_attempts`` executions in a row that count fail the run with a clear error.

    On SQLite (the cluster's code) only executions that commit nothing count (one that
    commits a step resets the count: a run that progresses is retried however often); on
    PostgreSQL without cluster flags (runs in-process, ``recovery.py``) every execution counts.
    """
    if database_url.endswith(".sqlite"):
        max_attempts = 1
        expected = "1 execution(s) in a row ended without committing anything (max_attempts 1)"
    else:
        max_attempts, expected = 2, "attempt 2 of 2"
    env = {"STEPGRAPH_MAX_ATTEMPTS": str(max_attempts)}
    srv = Serve(work, database_url, env)
    try:  # attempt 1 commits `a`, then is killed in `b`
        c = srv.client
        tid = c.threads.create()["thread_id"]
        run = c.runs.create(tid, "durable", input={"steps": ["input"]}, durability="sync")
        _blocked_times(work, 1)
    finally:
        srv.kill()
    srv = Serve(work, database_url, env)
    try:  # attempt 2 resumes at `b` and is killed there too
        _blocked_times(work, 2)
        assert srv.client.runs.get(tid, run["run_id"])["status"] == "running"
    finally:
        srv.kill()
    assert _nodes(work) == ["a", "b-start", "b-start"]
    srv = Serve(work, database_url, env)
    try:
        c = srv.client
        stored = wait_until(lambda: (r := c.runs.get(tid, run["run_id"]))["status"] == "error" and r,
                            "the run failing")
        error = stored["error"]
        assert error["error"] == "WorkerLostError" and error["message"].startswith(WORKER_LOST)
        assert expected in error["message"]
        thread = c.threads.get(tid)
        assert thread["status"] == "error" and thread["error"] == error
        assert within(lambda: c.runs.join(tid, run["run_id"]), "joining the failed run") == {"__error__": error}
        parts = within(lambda: list(c.runs.join_stream(tid, run["run_id"])), "streaming the failed run")
        assert [(p.event, p.data) for p in parts] == [("error", error)]
        assert _nodes(work) == ["a", "b-start", "b-start"]  # not run a third time
        # the thread takes new runs
        (work / "block").unlink()
        assert c.runs.wait(tid, "durable", input={"steps": ["next"]})["steps"][-4:] == ["next", "a", "b", "c"]
    finally:
        srv.stop()


def test_run_that_committed_nothing_runs_again_from_its_input(work: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "db.sqlite")
    srv = Serve(work, db)
    try:
        c = srv.client
        tid = c.threads.create()["thread_id"]
        run = c.runs.create(tid, "durable", input={"steps": ["input"]}, durability="exit")
        _blocked_times(work, 1)
        assert c.threads.get_history(tid) == []  # durability "exit": nothing stored yet
    finally:
        srv.kill()
    (work / "block").unlink()
    srv = Serve(work, db)
    try:
        c = srv.client
        out = within(lambda: c.runs.join(tid, run["run_id"]), "joining the re-run")
        assert out == {"steps": ["input", "a", "b", "c"]}
        assert c.runs.get(tid, run["run_id"])["status"] == "success"
        assert _nodes(work) == ["a", "b-start", "a", "b-start", "b-end", "c"]
    finally:
        srv.stop()
