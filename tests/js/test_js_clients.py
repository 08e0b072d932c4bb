"""LangGraph's JavaScript clients against ``stepgraph serve`` (issue 6), from pytest.

Runs the Node checks of this directory (``README.md``) against a real ``stepgraph serve``
subprocess on a free loopback port, hosting ``examples/stepgraph.json`` (the conformance
graphs plus ``chat_hitl``) on a temporary SQLite file:

* ``sdk_check.mjs``: ``@langchain/langgraph-sdk`` (classic runs API and v3 thread streams);
* ``agui_check.mjs``: CopilotKit's ``@ag-ui/langgraph``;
* ``browser_check.mjs``: a Vite page with both ``useStream`` hooks in headless Debian
  Chromium (``/usr/bin/chromium`` or ``CHROMIUM_PATH``); screenshots go to ``artifacts/``.

Each must end with ``N passed, 0 failed``. ``npm ci`` runs first unless ``node_modules``
is up to date with ``package-lock.json``. Skipped (with the reason) when ``node``/``npm``
or Chromium is missing, or when ``npm ci`` fails outside CI (no registry access); in CI
(``CI`` set) a failing ``npm ci`` is an error.
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
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = REPO / "examples" / "stepgraph.json"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)
PACKAGES = ("@langchain/langgraph-sdk", "@langchain/react", "@ag-ui/langgraph", "playwright-core", "vite")


def _node_modules_current() -> bool:
    """Whether ``npm ci`` already installed exactly ``package-lock.json``."""
    stamp = HERE / "node_modules" / ".package-lock.json"
    if not stamp.is_file() or not all((HERE / "node_modules" / p / "package.json").is_file() for p in PACKAGES):
        return False
    return stamp.stat().st_mtime >= (HERE / "package-lock.json").stat().st_mtime


@pytest.fixture(scope="module")
def node_ready() -> str:
    """``node`` with the pinned packages installed (``npm ci`` when needed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed: the JavaScript client checks need Node >= 20.19 and npm")
    if not _node_modules_current():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            message = f"npm ci failed in {HERE}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
    return node


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def js_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``stepgraph serve`` hosting ``examples/stepgraph.json`` on loopback; yields its URL."""
    tmp = tmp_path_factory.mktemp("js-server")
    port = _free_port()
    exe = Path(sys.executable).with_name("stepgraph")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]
    cmd += ["serve", "--config", str(CONFIG), "--host", "127.0.0.1", "--port", str(port),
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


def _run_check(node: str, script: str, url: str, timeout: float, *extra: str) -> None:
    done = subprocess.run([node, script, "--url", url, "--timeout", "60", *extra], cwd=HERE,
                          capture_output=True, text=True, timeout=timeout)
    out = done.stdout + ("\n" + done.stderr if done.stderr.strip() else "")
    found = SUMMARY.findall(done.stdout)
    assert found, f"{script} printed no summary (exit {done.returncode}):\n{out[-4000:]}"
    passed, failed, _ = found[-1]
    failures = "\n".join(line for line in done.stdout.splitlines() if line.startswith("FAIL"))
    assert int(failed) == 0 and done.returncode == 0, f"{script}: {passed} passed, {failed} failed\n{failures}\n{out[-3000:]}"
    assert int(passed) > 0, out


@pytest.mark.timeout(300)
def test_js_sdk(node_ready: str, js_server: str) -> None:
    """The JS SDK: assistants, threads, classic streams, interrupts, runs, store, v3 thread streams, CORS."""
    _run_check(node_ready, "sdk_check.mjs", js_server, 280)


@pytest.mark.timeout(180)
def test_agui(node_ready: str, js_server: str) -> None:
    """``@ag-ui/langgraph``: streamed chat answer, second turn, interrupt and resume."""
    _run_check(node_ready, "agui_check.mjs", js_server, 160)


@pytest.mark.timeout(420)
def test_browser(node_ready: str, js_server: str) -> None:
    """``useStream`` (both hooks) in headless Chromium: chat, reload from history, interrupt + approve."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)")
    _run_check(node_ready, "browser_check.mjs", js_server, 400)
