"""The config and the security flags through the real ``stepgraph serve`` process (refusals
with the key's name on stderr, CORS, Host check, start-up notes) and through ``run_cli``
(the exposed-server warning, the langgraph-dev compatibility flags)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from stepgraph.server.cli import build_parser, run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


AUTH_MODULE = (
    "from langgraph_sdk import Auth\n"
    "auth = Auth()\n"
    "@auth.authenticate\n"
    "async def authenticate(headers: dict) -> str:\n"
    "    return 'anyone'\n"
)


def _cmd() -> list[str]:
    exe = Path(sys.executable).with_name("stepgraph")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]


def _config(tmp: Path, extra: dict[str, Any]) -> Path:
    (tmp / "g.py").write_text((EXAMPLES / "server_graphs.py").read_text())
    path = tmp / "langgraph.json"
    path.write_text(json.dumps({"graphs": {"simple": "./g.py:simple"}, **extra}))
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(tmp: Path, config: Path, *flags: str) -> Iterator[tuple[str, Path]]:
    port = _free_port()
    log = tmp / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([*_cmd(), "serve", "--config", str(config), "--port", str(port),
                                 "--database-url", str(tmp / "db.sqlite"), *flags],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield url, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_refused_keys_stop_the_process(tmp_path: Path) -> None:
    config = _config(tmp_path, {"env": "missing.env", "store": {"index": {"dims": 2, "embed": "./nope.py:embed"}},
                                "htpp": {}, "ui": {"a": "./a.tsx"}})
    done = subprocess.run([*_cmd(), "serve", "--config", str(config), "--port", str(_free_port())],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    # the schema pass reports the unknown key first
    assert "`htpp`" in done.stderr and "SG521" in done.stderr and "did you mean `http`" in done.stderr
    config = _config(tmp_path, {"env": "missing.env", "store": {"index": {"dims": 2, "embed": "./nope.py:embed"}},
                                "ui": {"a": "./a.tsx"}})
    done = subprocess.run([*_cmd(), "dev", "--config", str(config), "--port", str(_free_port())],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    for key in ("`env`", "missing.env", "`store.index.embed`", "nope.py", "`ui`", "SG523", "SG524"):
        assert key in done.stderr, done.stderr


def test_missing_graph_file_stops_the_process(tmp_path: Path) -> None:
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"agent": "./src/agent.py:graph"}}))
    done = subprocess.run([*_cmd(), "serve", "--config", str(config)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 1 and "`graphs.agent`" in done.stderr and "./src/agent.py" in done.stderr


def test_served_config(tmp_path: Path) -> None:
    config = _config(tmp_path, {"python_version": "3.12", "dockerfile_lines": ["RUN true"],
                                "http": {"cors": {"allow_origins": ["https://app.example"]}}})
    with serving(tmp_path, config, "--allowed-hosts", "my-box.test", "--no-browser", "--no-reload",
                 "--allow-blocking", "--log-level", "info") as (url, log):
        with httpx.Client(base_url=url, timeout=30) as http:
            ok = http.options("/threads/search", headers={"Origin": "https://app.example",
                                                          "Access-Control-Request-Method": "POST"})
            assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://app.example"
            other = http.post("/threads/search", json={}, headers={"Origin": "http://localhost:5173"})
            assert "access-control-allow-origin" not in other.headers
            assert http.get("/ok", headers={"Host": f"my-box.test:{url.rsplit(':', 1)[1]}"}).status_code == 200
            rebind = http.get("/ok", headers={"Host": "attacker.example"})
            assert rebind.status_code == 400 and "SG531" in rebind.json()["detail"]
        text = log.read_text()
        assert "`python_version`" in text and "`dockerfile_lines`" in text and "build-time" in text


def _no_serve(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    return calls


def test_exposed_host_without_auth_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    calls = _no_serve(monkeypatch)
    config = _config(tmp_path, {})
    assert run_cli(["serve", "--config", str(config), "--host", "0.0.0.0",
                    "--database-url", str(tmp_path / "db.sqlite")]) == 0
    assert calls and calls[0]["host"] == "0.0.0.0"
    err = capsys.readouterr().err
    assert "WITHOUT AUTHENTICATION" in err and "0.0.0.0" in err and "!!!" in err
    assert run_cli(["serve", "--config", str(config), "--database-url", str(tmp_path / "db.sqlite")]) == 0
    assert "WITHOUT AUTHENTICATION" not in capsys.readouterr().err
    (tmp_path / "auth.py").write_text(AUTH_MODULE)
    config = _config(tmp_path, {"auth": {"path": "./auth.py:auth"}})
    assert run_cli(["serve", "--config", str(config), "--host", "0.0.0.0",
                    "--database-url", str(tmp_path / "db.sqlite")]) == 0
    assert "WITHOUT AUTHENTICATION" not in capsys.readouterr().err


def test_bad_allowed_hosts_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    calls = _no_serve(monkeypatch)
    assert run_cli(["serve", "--config", str(_config(tmp_path, {})), "--allowed-hosts", "a*b"]) == 1
    assert not calls and "--allowed-hosts" in capsys.readouterr().err


def test_compat_flags_documented() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    help_text = sub.choices["dev"].format_help()
    for flag, meaning in (("--no-browser", "never opens a browser"), ("--no-reload", "never reloads"),
                          ("--allow-blocking", "never raises on blocking")):
        assert flag in help_text and meaning in " ".join(help_text.split())
    with pytest.raises(SystemExit):
        parser.parse_args(["dev", "--tunnel"])  # an unsupported langgraph dev flag is refused
