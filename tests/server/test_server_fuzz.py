"""A bounded schemathesis run against ``stepgraph serve`` (a subprocess): no 5xx, no response
that breaks the OpenAPI document, no undocumented status or content type.

Every operation of ``/openapi.json`` is fuzzed (coverage, fuzzing and stateful phases, a few
examples each, a time budget) except the two endpoints that stream until the client leaves
(``GET /threads/{id}/stream`` and ``POST /threads/{id}/stream/events``; their inputs are
covered in ``test_server_limits``). The graphs are the examples' minus ``slow`` (its
``delay`` comes from the input), and ``schemathesis_hooks`` caps ``after_seconds``, so
``wait`` and ``stream`` calls end.

The run is made twice: without auth, and with the custom auth of ``auth_app/auth.py``
(bearer tokens, owner stamped and filtered, store namespaces rewritten) and a valid token on
every request, so the authorization paths (handlers' filters in the storage queries, their
changes re-validated, the 401/403/404 answers the document adds with auth) are fuzzed too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from test_server_conformance import REPO, _free_port, _wait_ok

pytest.importorskip("schemathesis")

BUDGET_SECONDS = 60
EXAMPLES_PER_OPERATION = 5
STREAM_FOREVER = ("/threads/{thread_id}/stream", "/threads/{thread_id}/stream/events")


AUTH_MODULE = Path(__file__).parent / "auth_app" / "auth.py"
AUTH_HEADER = "Authorization: Bearer token-alice"


def _config(tmp: Path, *, auth: bool) -> Path:
    graphs = json.loads((REPO / "examples" / "stepgraph.json").read_text())["graphs"]
    here = {gid: ref.replace("./", f"{REPO / 'examples'}/", 1) for gid, ref in graphs.items() if gid != "slow"}
    config: dict[str, object] = {"graphs": here}
    if auth:
        config["auth"] = {"path": f"{AUTH_MODULE}:auth", "openapi": {
            "securitySchemes": {"BearerAuth": {"type": "http", "scheme": "bearer"}},
            "security": [{"BearerAuth": []}]}}
    path = tmp / "stepgraph.json"
    path.write_text(json.dumps(config))
    return path


def _schemathesis(tmp: Path) -> Path:
    exe = Path(sys.executable).with_name("schemathesis")
    found = str(exe) if exe.exists() else shutil.which("schemathesis")
    if found is None:
        pytest.skip("the schemathesis command is not installed")
    return Path(found)


@pytest.mark.slow
@pytest.mark.parametrize("auth", [False, True], ids=["no-auth", "auth"])
def test_schemathesis_finds_no_server_error_and_no_schema_violation(tmp_path: Path, auth: bool) -> None:
    st = _schemathesis(tmp_path)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    exe = Path(sys.executable).with_name("stepgraph")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]
    cmd += ["serve", "--config", str(_config(tmp_path, auth=auth)), "--port", str(port),
            "--database-url", str(tmp_path / "db.sqlite")]
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path)
    report = tmp_path / "report.json"
    try:
        _wait_ok(url, proc, tmp_path)
        args = [str(st), "run", f"{url}/openapi.json", "--max-examples", str(EXAMPLES_PER_OPERATION),
                "--max-time", str(BUDGET_SECONDS), "--seed", os.environ.get("STEPGRAPH_FUZZ_SEED", "10"), "--workers", "1",
                "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                            "response_schema_conformance",
                "--request-timeout", "20", "--report", "json", "--report-json-path", str(report)]
        for path in STREAM_FOREVER:
            args += ["--exclude-path", path]
        if auth:
            args += ["--header", AUTH_HEADER]
        env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(args, capture_output=True, text=True, timeout=BUDGET_SECONDS + 120, env=env,
                              cwd=tmp_path)
        if auth:  # the fuzzer's requests were authenticated (so they reached the handlers), others are not
            token = {AUTH_HEADER.split(": ")[0]: AUTH_HEADER.split(": ")[1]}
            with httpx.Client(base_url=url, timeout=30) as http:
                assert http.post("/threads/count", json={}, headers=token).status_code == 200
                assert http.post("/threads/count", json={}).status_code == 401
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    assert report.is_file(), done.stdout[-4000:] + done.stderr[-2000:]
    summary = json.loads(report.read_text())
    ops, cases = summary["operations"], summary["test_cases"]
    print(f"schemathesis ({'auth' if auth else 'no auth'}): {ops['tested']} operations, {cases['generated']} test cases, "
          f"{len(summary['failures'])} failure kinds, {len(summary['errors'])} errors; phases "
          + ", ".join(f"{name} {info['status']}" for name, info in summary["phases"].items()))
    assert ops["tested"] >= 50, ops
    assert summary["failures"] == [] and summary["errors"] == [], done.stdout[-12000:]
    assert "Traceback" not in (tmp_path / "server.log").read_text()
