"""LangChain's agent-chat-ui against ``stepgraph serve`` in headless Chromium (issue 6), from pytest.

``agent_chat_ui/setup.sh`` scaffolds the Next.js template of npm ``create-agent-chat-app``
(agent-chat-ui, source unchanged) into the git-ignored ``agent_chat_ui/work/``, installs it
with ``npm ci`` from ``agent_chat_ui/web.package-lock.json`` and runs ``next build`` offline
(the Google font comes from ``agent_chat_ui/fonts`` via ``NEXT_FONT_GOOGLE_MOCKED_RESPONSES``);
it is skipped when already built. ``agent_chat_ui/agent_chat_ui_check.mjs`` then serves the
build with ``next start`` and drives it in Debian Chromium through playwright-core against a
``stepgraph serve`` subprocess: chat, second turn, reload + thread-history sidebar, chat_hitl
interrupt. It must end with ``N passed, 0 failed``.

Skipped (with the reason) when node/npm or Chromium is missing, or when the setup fails
outside CI (no registry access); in CI (``CI`` set) a failing setup is an error.
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
ACU = HERE / "agent_chat_ui"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def _setup_failed(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def acu_ready() -> str:
    """``node`` with playwright-core (tests/js) and a built agent-chat-ui (``setup.sh``)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed: agent-chat-ui needs Node >= 20.19 and npm")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)")
    if not (HERE / "node_modules" / "playwright-core" / "package.json").is_file():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            _setup_failed(f"npm ci failed in {HERE}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    t0 = time.monotonic()
    done = subprocess.run(["bash", str(ACU / "setup.sh")], cwd=ACU, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        _setup_failed(f"agent_chat_ui/setup.sh failed after {time.monotonic() - t0:.0f}s:\n"
                      f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return node


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def acu_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``stepgraph serve`` hosting ``examples/stepgraph.json`` on loopback; yields its URL."""
    tmp = tmp_path_factory.mktemp("acu-server")
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


@pytest.mark.timeout(1200)
def test_agent_chat_ui(acu_ready: str, acu_server: str) -> None:
    """agent-chat-ui (``next build``): chat, second turn, reload + history sidebar, chat_hitl interrupt."""
    done = subprocess.run([acu_ready, str(ACU / "agent_chat_ui_check.mjs"), "--url", acu_server, "--timeout", "90"],
                          cwd=HERE, capture_output=True, text=True, timeout=400)
    out = done.stdout + ("\n" + done.stderr if done.stderr.strip() else "")
    found = SUMMARY.findall(done.stdout)
    assert found, f"agent_chat_ui_check.mjs printed no summary (exit {done.returncode}):\n{out[-4000:]}"
    passed, failed, _ = found[-1]
    failures = "\n".join(line for line in done.stdout.splitlines() if line.startswith("FAIL"))
    assert int(failed) == 0 and done.returncode == 0, f"{passed} passed, {failed} failed\n{failures}\n{out[-3000:]}"
    assert int(passed) > 0, out
