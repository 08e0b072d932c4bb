"""The acceptance script ``sdk_client_check.py`` against ``stepgraph serve`` (a subprocess)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LGVENV_PY = REPO / "benchmarks" / ".lgvenv" / "bin" / "python"
SCRIPT_CANDIDATES = (REPO.parent / "shared" / "conformance" / "sdk_client_check.py",
                     Path("/work/shared/conformance/sdk_client_check.py"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _checker() -> tuple[Path, Path]:
    script = next((p for p in SCRIPT_CANDIDATES if p.is_file()), None)
    if script is None:
        pytest.skip("sdk_client_check.py not found next to the repository")
    if not LGVENV_PY.exists():
        pytest.skip(f"{LGVENV_PY} missing (a venv with langgraph 1.2.22 + langgraph-sdk 0.4.14)")
    probe = subprocess.run([str(LGVENV_PY), "-c", "import langgraph, langgraph_sdk"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"langgraph or langgraph-sdk missing in {LGVENV_PY}")
    return LGVENV_PY, script


def _serve(tmp: Path, port: int) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).with_name("stepgraph")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]
    cmd += ["serve", "--config", str(REPO / "examples" / "stepgraph.json"), "--port", str(port),
            "--database-url", str(tmp / "db.sqlite"), "--no-browser", "--no-reload"]
    log = (tmp / "server.log").open("wb")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp)


def _wait_ok(url: str, proc: subprocess.Popen[bytes], tmp: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, (tmp / "server.log").read_text()
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2):  # noqa: S310 - loopback only
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("server did not answer /ok:\n" + (tmp / "server.log").read_text())


def test_sdk_client_check_passes(tmp_path: Path) -> None:
    python, script = _checker()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(tmp_path, port)
    try:
        _wait_ok(url, proc, tmp_path)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH", "LANGCHAIN", "LANGGRAPH"))}
        done = subprocess.run([str(python), str(script), "--url", url, "--timeout", "30"],
                              capture_output=True, text=True, timeout=240, env=env)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    lines = done.stdout.strip().splitlines()
    failed = [line for line in lines if not line.startswith("PASS")]
    assert lines and lines[-1] == "47 passed, 0 failed", "\n".join(failed) + done.stderr[-2000:]
    assert proc.returncode in (0, -signal.SIGTERM), (tmp_path / "server.log").read_text()[-2000:]
    assert "Application shutdown complete" in (tmp_path / "server.log").read_text()
