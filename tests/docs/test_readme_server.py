"""The README's server commands: `stepgraph serve`, then the curl and SDK calls it shows."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory):
    port = _free_port()
    db = tmp_path_factory.mktemp("readme") / "server.sqlite"
    cmd = [
        sys.executable, "-m", "stepgraph.cli", "serve", "--config", "examples/stepgraph.json",
        "--port", str(port), "--database-url", str(db),
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_readme_curl_call(server_url: str) -> None:
    """The curl request in the README returns the documented output."""
    text = (ROOT / "README.md").read_text()
    body = re.search(r"-d '(\{.*?\})'", text).group(1)
    expected = re.search(r"# (\{\"value\".*\})", text).group(1)
    resp = httpx.post(f"{server_url}/runs/wait", json=json.loads(body), timeout=30)
    assert resp.status_code == 200
    assert resp.json() == json.loads(expected)


def test_readme_sdk_call(server_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's langgraph-sdk snippet streams the run's updates."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python-sdk\n(.*?)```", text, flags=re.S).group(1)
    block = block.replace("http://127.0.0.1:2024", server_url)
    exec(compile(block, "README.md", "exec", dont_inherit=True), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "updates {'a': {'value': 'xa', 'steps': ['a']}}" in out
    assert "updates {'b': {'value': 'xab', 'steps': ['b']}}" in out
