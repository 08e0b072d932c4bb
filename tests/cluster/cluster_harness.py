"""Real cluster processes for the tests: API and worker ``stepgraph serve`` processes on one
PostgreSQL schema and one Redis database, with short leases.

``Cluster(tmp, redis=True)`` creates a fresh schema (and picks a free Redis db/prefix);
``add("api")`` / ``add("worker")`` start processes and wait for ``/ok``; ``kill(proc)``
sends SIGKILL; ``close()`` stops everything and drops the schema. A process is a ``Proc``
(its pid, url, log).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("STEPGRAPH_TEST_REDIS", "redis://127.0.0.1:6379/0")
HERE = Path(__file__).resolve().parent
LEASE = {"STEPGRAPH_LEASE_TTL_S": "2", "STEPGRAPH_HEARTBEAT_S": "0.5", "STEPGRAPH_REAPER_S": "0.5"}


def unreachable(redis: bool) -> str | None:
    """Why the cluster tests cannot run here (``None``: they can)."""
    try:
        import psycopg

        psycopg.connect(PG_BASE, connect_timeout=2).close()
    except Exception as exc:  # noqa: BLE001
        return f"PostgreSQL not reachable at {PG_BASE}: {exc}"
    if redis:
        try:
            import redis as redis_py

            redis_py.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
        except Exception as exc:  # noqa: BLE001
            return f"Redis not reachable at {REDIS_URL} (or redis-py missing): {exc}"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Proc:
    role: str
    popen: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None


class Cluster:
    """Processes of one test cluster (see the module docstring)."""

    def __init__(self, tmp: Path, *, redis: bool = True, env: dict[str, str] | None = None,
                 jobs: int = 10, redis_url: str | None = None) -> None:
        import psycopg

        self.tmp = tmp
        self.schema = f"sg_cl_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {self.schema}")
        self.db_url = f"{PG_BASE}?options=-csearch_path%3D{self.schema}"
        self.redis_url = (redis_url or REDIS_URL) if redis else None
        self.prefix = f"sgt{uuid.uuid4().hex[:8]}:"
        self.env = {**os.environ, **LEASE, "STEPGRAPH_REDIS_PREFIX": self.prefix, **(env or {})}
        self.jobs = jobs
        self.procs: list[Proc] = []
        (tmp / "stepgraph.json").write_text(json.dumps({"graphs": {"g": str(HERE / "cluster_graphs.py") + ":graph"}}))

    def start(self, role: str, *, wait: bool = True) -> Proc:
        """Start a process of ``role`` (``plain``: one ``stepgraph serve`` without cluster flags
        on the same database; ``sqlite``: the same on the SQLite file ``db.sqlite`` of the
        cluster's directory, what ``stepgraph dev`` runs)."""
        port = _free_port()
        exe = Path(sys.executable).with_name("stepgraph")
        db_url = str(self.tmp / "db.sqlite") if role == "sqlite" else self.db_url
        cmd = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "stepgraph.cli"]),
               "serve", "--config", str(self.tmp / "stepgraph.json"), "--port", str(port),
               "--database-url", db_url, "--jobs", str(self.jobs), "--log-level", "info"]
        if role not in ("plain", "sqlite"):
            cmd += ["--role", role]
            if self.redis_url:
                cmd += ["--redis-url", self.redis_url]
            elif role == "all":
                cmd += ["--cluster"]
        log = self.tmp / f"{role}-{port}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                     cwd=self.tmp, env=self.env)
        proc = Proc(role, popen, f"http://127.0.0.1:{port}", log)
        self.procs.append(proc)
        if wait:
            self.wait_ok(proc)
        return proc

    def wait_ok(self, proc: Proc, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.alive(), proc.log.read_text()
            try:
                with urllib.request.urlopen(f"{proc.url}/ok", timeout=2):  # noqa: S310 - loopback
                    return
            except OSError:
                assert time.monotonic() < deadline, "no /ok:\n" + proc.log.read_text()
                time.sleep(0.1)

    def add(self, role: str) -> Proc:
        return self.start(role)

    @staticmethod
    def kill(proc: Proc) -> None:
        if proc.alive():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.popen.wait()

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.db_url, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

    def counters(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.sql("SELECT name, n FROM sg_cluster_counters")}

    def close(self) -> None:
        import psycopg

        for proc in self.procs:
            if proc.alive():
                with _suppress():
                    os.killpg(proc.pid, signal.SIGCONT)
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill(proc)
        if os.environ.get("STEPGRAPH_KEEP_SCHEMA"):  # debugging: leave the data for a look
            print(f"kept schema {self.schema}")
            return
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {self.schema} CASCADE")
        if self.redis_url:
            with _suppress():
                import redis as redis_py

                client = redis_py.Redis.from_url(self.redis_url)
                keys = list(client.scan_iter(f"{self.prefix}*", count=1000))
                if keys:
                    client.delete(*keys)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def checkpoint_forks(cluster: Cluster) -> list[tuple[str, str]]:
    """Root checkpoints with two or more children: ``(thread_id, checkpoint_id)``."""
    rows = cluster.sql("SELECT thread_id, parent_checkpoint_id FROM sg_checkpoints WHERE checkpoint_ns = ''"
                       " AND parent_checkpoint_id IS NOT NULL GROUP BY thread_id, parent_checkpoint_id"
                       " HAVING COUNT(*) > 1")
    return [(str(t), str(c)) for t, c in rows]


class PrivateRedis:
    """A ``redis-server`` of this test on a free port (to kill and restart it)."""

    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.tmp = tmp
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.popen = subprocess.Popen(["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
                                       "--dir", str(self.tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        import redis as redis_py

        deadline = time.monotonic() + 10
        while True:
            try:
                redis_py.Redis.from_url(self.url).ping()
                return
            except Exception:  # noqa: BLE001
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()
