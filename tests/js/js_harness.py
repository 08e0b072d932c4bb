"""Shared by the JavaScript client tests: Node set-up, a ``stepgraph serve`` subprocess, and
reading a check script's ``N passed, M failed`` summary. (A module with a name no other test
folder uses, so it is imported unambiguously.)
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = REPO / "examples" / "stepgraph.json"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def setup_failed(message: str) -> None:
    """A missing download is a skip on a developer machine but an error in CI (``CI`` set)."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def require_node(what: str) -> tuple[str, str]:
    """``(node, npm)``, or skip the test with the reason."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"node/npm not installed: {what} need(s) Node >= 20.19 and npm")
    return node, npm


def require_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)")


def npm_ci(npm: str) -> None:
    """``npm ci`` in ``tests/js`` (the pinned packages of ``package-lock.json``)."""
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        setup_failed(f"npm ci failed in {HERE}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(tmp: Path, config: Path = CONFIG, *, command: str = "serve") -> Iterator[str]:
    """``stepgraph serve`` (or ``command``, e.g. ``dev``) hosting ``config``
    (``examples/stepgraph.json``) on loopback; yields its URL. Its output goes to
    ``tmp / "server.log"``."""
    port = _free_port()
    exe = Path(sys.executable).with_name("stepgraph")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]
    cmd += [command, "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
            "--database-url", str(tmp / "db.sqlite"), "--log-level", "warning"]
    log_path = tmp / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2):  # noqa: S310 - loopback only
                    break
            except OSError:
                assert time.monotonic() < deadline, "server did not answer /ok:\n" + log_path.read_text()
                time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run_check(node: str, script: str | Path, url: str, *, timeout: float, check_timeout: int = 60) -> None:
    """Run a Node check script against ``url``; it must end with ``N passed, 0 failed``."""
    done = subprocess.run([node, str(script), "--url", url, "--timeout", str(check_timeout)], cwd=HERE,
                          capture_output=True, text=True, timeout=timeout)
    out = done.stdout + ("\n" + done.stderr if done.stderr.strip() else "")
    found = SUMMARY.findall(done.stdout)
    name = Path(script).name
    assert found, f"{name} printed no summary (exit {done.returncode}):\n{out[-4000:]}"
    passed, failed, _ = found[-1]
    failures = "\n".join(line for line in done.stdout.splitlines() if line.startswith("FAIL"))
    assert int(failed) == 0 and done.returncode == 0, f"{name}: {passed} passed, {failed} failed\n{failures}\n{out[-3000:]}"
    assert int(passed) > 0, out
