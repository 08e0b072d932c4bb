"""Servers for the RemoteGraph tests, and the graphs to compare with.

``remote_url`` is parametrized over the servers a RemoteGraph test runs against, each
started once per session on a free loopback port and stopped at the end:

* ``lgdev``: the real ``langgraph dev`` (langgraph-api 0.16.7) hosting
  ``../shared/conformance/graphs_for_sdk_check.py``; needs ``STEPGRAPH_LGDEV_VENV`` to point
  at a venv made with::

      python3 -m venv /tmp/lgdev && /tmp/lgdev/bin/pip install "langgraph-cli[inmem]==0.4.40" \\
          "langgraph-api==0.16.7" "langgraph==1.2.22" "langgraph-sdk==0.4.14"

* ``stepgraph``: ``stepgraph serve --config examples/stepgraph.json`` (the same graphs,
  ported to stepgraph in ``examples/server_graphs.py``), once ``stepgraph.server`` exists.

A server that cannot be started skips its tests with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_CANDIDATES = (REPO.parent / "shared", Path("/work/shared"))
STARTUP_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_ok(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:  # noqa: S310 - loopback
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server at {url} not ready after {STARTUP_TIMEOUT}s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server we started: its own process group (started with a new session)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


class Server:
    """A server process on 127.0.0.1 (started in its own session so it stops as a whole)."""

    def __init__(self, name: str, cmd: list[str], port: int, *, env: dict[str, str],
                 cwd: Path, log: Path) -> None:
        self.name = name
        self.port = port
        self.log = log
        self._fh = log.open("wb")
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=self._fh, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        try:
            _wait_ok(self.url, self.proc, self.log)
        except RuntimeError:
            # langgraph dev silently moves to another port when ours got taken meanwhile.
            moved = re.search(r"using port (\d+) instead", self.log.read_text(errors="replace"))
            if not moved:
                raise
            self.port = int(moved.group(1))
            _wait_ok(self.url, self.proc, self.log)

    def stop(self) -> None:
        _stop(self.proc)
        self._fh.close()


def _shared_dir() -> Path | None:
    for cand in SHARED_CANDIDATES:
        if (cand / "conformance" / "run_real_langgraph_dev.sh").exists():
            return cand
    return None


@pytest.fixture(scope="session")
def lgdev_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real LangGraph dev server (``STEPGRAPH_LGDEV_VENV``), hosting the conformance graphs."""
    pytest.importorskip("langgraph_sdk", reason="RemoteGraph needs langgraph-sdk")
    venv = os.environ.get("STEPGRAPH_LGDEV_VENV")
    if not venv:
        pytest.skip("STEPGRAPH_LGDEV_VENV is not set: no real 'langgraph dev' venv to test against")
    if not (Path(venv) / "bin" / "langgraph").exists():
        pytest.skip(f"STEPGRAPH_LGDEV_VENV={venv} has no bin/langgraph (langgraph-cli[inmem])")
    shared = _shared_dir()
    if shared is None:
        pytest.skip("../shared/conformance/run_real_langgraph_dev.sh not found")
    port = _free_port()
    env = {**os.environ, "VENV": venv, "PORT": str(port)}
    logdir = tmp_path_factory.mktemp("lgdev")
    server = Server("lgdev", ["bash", str(shared / "conformance" / "run_real_langgraph_dev.sh")],
                    port, env=env, cwd=logdir, log=logdir / "server.log")
    try:
        server.wait_ready()
        yield server.url
    finally:
        server.stop()
        scratch = re.search(r"serving from (\S+)", server.log.read_text(errors="replace"))
        if scratch and scratch.group(1).startswith(tempfile.gettempdir()):
            shutil.rmtree(scratch.group(1), ignore_errors=True)


@pytest.fixture(scope="session")
def stepgraph_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """stepgraph's own server hosting ``examples/stepgraph.json`` (SQLite in a scratch dir):
    ``python -m stepgraph.cli serve --config examples/stepgraph.json --host 127.0.0.1
    --port N --database-url <tmp>/stepgraph.sqlite``."""
    pytest.importorskip("langgraph_sdk", reason="RemoteGraph needs langgraph-sdk")
    if importlib.util.find_spec("stepgraph.server.cli") is None:
        pytest.skip("stepgraph.server is not ready yet (no stepgraph.server.cli): "
                    "the lead wires this fixture once the server lands")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("sgserve")
    cmd = [sys.executable, "-m", "stepgraph.cli", "serve", "--config",
           str(REPO / "examples" / "stepgraph.json"), "--host", "127.0.0.1", "--port", str(port),
           "--database-url", str(workdir / "stepgraph.sqlite")]
    server = Server("stepgraph", cmd, port, env=dict(os.environ), cwd=workdir,
                    log=workdir / "server.log")
    try:
        server.wait_ready()
        yield server.url
    finally:
        server.stop()


@pytest.fixture(params=["lgdev", "stepgraph"])
def remote_url(request: pytest.FixtureRequest) -> str:
    """The base URL of each server the RemoteGraph tests run against."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="session")
def graphs() -> ModuleType:
    """``examples/server_graphs.py``: the served graphs, to run locally for parity."""
    path = REPO / "examples" / "server_graphs.py"
    spec = importlib.util.spec_from_file_location("stepgraph_example_server_graphs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # string annotations resolve through sys.modules
    spec.loader.exec_module(module)
    return module
