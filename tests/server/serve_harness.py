"""``stepgraph serve`` (or ``dev``) as a real subprocess on a free loopback port, for a config.

``serve_config(config, tmp, database_url=...)`` starts it, waits for ``/ok`` and yields
``(url, log_path)``; the process group is stopped afterwards. ``run_cli_once`` runs the
command expecting it to refuse to start and returns ``(exit code, output)``. PostgreSQL
schemas for a test: ``pg_schema_url()``. (A module with a name no other test folder uses.)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BASE = os.environ.get("STEPGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _command(command: str) -> list[str]:
    exe = Path(sys.executable).with_name("stepgraph")
    return [str(exe), command] if exe.exists() else [sys.executable, "-m", "stepgraph.cli", command]


@contextmanager
def serve_config(config: Path, tmp: Path, *, database_url: str | None = None,
                 command: str = "serve", args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, ok_path: str = "/ok") -> Iterator[tuple[str, Path]]:
    """``stepgraph <command> --config config [args]`` on loopback (``env`` added to the
    environment); yields ``(url, log file)`` once ``ok_path`` answers."""
    port = _free_port()
    cmd = [*_command(command), "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
           "--database-url", database_url or str(tmp / "db.sqlite"), "--log-level", "info", *args]
    log_path = tmp / f"server-{port}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp,
                                env={**os.environ, **env} if env else None)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 40
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(f"{url}{ok_path}", timeout=2):  # noqa: S310 - loopback only
                    break
            except OSError:
                assert time.monotonic() < deadline, "server did not answer /ok:\n" + log_path.read_text()
                time.sleep(0.1)
        yield url, log_path
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run_cli_once(config: Path, tmp: Path, *, command: str = "serve", timeout: float = 60) -> tuple[int, str]:
    """Run ``stepgraph serve`` for a config that must make it stop; ``(exit code, output)``."""
    cmd = [*_command(command), "--config", str(config), "--host", "127.0.0.1", "--port", str(_free_port()),
           "--database-url", str(tmp / "db.sqlite")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            cwd=tmp, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"the server did not stop:\n{out}") from None
    return proc.returncode, out


def pg_unreachable() -> str | None:
    """Why PostgreSQL cannot be used (``None`` when it can)."""
    try:
        import psycopg

        psycopg.connect(PG_BASE, connect_timeout=2).close()
    except Exception as exc:  # noqa: BLE001 - any failure is a reason to skip
        return f"PostgreSQL not reachable at {PG_BASE}: {exc}"
    return None


@contextmanager
def pg_schema_url() -> Iterator[str]:
    """A database URL whose search_path is a fresh schema, dropped afterwards."""
    import psycopg

    schema = f"sg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
