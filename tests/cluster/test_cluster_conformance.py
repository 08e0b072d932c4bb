"""``sdk_client_check.py`` through a round-robin proxy over two API processes and a worker
(with Redis, and in Postgres-only mode). ``-m cluster``: a few minutes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from cluster_harness import Cluster, _free_port

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
LGVENV_PY = Path(os.environ.get("STEPGRAPH_LGVENV_PY") or REPO / "benchmarks" / ".lgvenv" / "bin" / "python")
"""The LangGraph SDK's venv (``benchmarks/setup_langgraph.sh``; another checkout's with ``STEPGRAPH_LGVENV_PY``)."""
SCRIPT = Path("/work/shared/conformance/sdk_client_check.py")


@pytest.mark.parametrize("mode", ["redis", "postgres-only"])
def test_sdk_conformance_through_round_robin(mode: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if not SCRIPT.is_file() or not LGVENV_PY.exists():
        pytest.skip("sdk_client_check.py or benchmarks/.lgvenv missing")
    cluster: Cluster = request.getfixturevalue("cluster" if mode == "redis" else "pg_cluster")
    (cluster.tmp / "stepgraph.json").write_text((REPO / "examples" / "stepgraph.json").read_text()
                                                 .replace('"./', f'"{REPO / "examples"}/'))
    apis = [cluster.add("api"), cluster.add("api")]
    cluster.add("worker")
    port = _free_port()
    proxy = subprocess.Popen([sys.executable, str(Path(__file__).with_name("rrproxy.py")), str(port),
                              *(a.url for a in apis)])
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2):  # noqa: S310 - loopback
                    break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        out = subprocess.run([str(LGVENV_PY), str(SCRIPT), "--url", url], capture_output=True, text=True,
                             timeout=800, cwd=tmp_path)
        print(f"\nCHAOS conformance ({mode}): {out.stdout.strip().splitlines()[-1]}")
        assert out.returncode == 0, out.stdout[-4000:]
    finally:
        proxy.terminate()
        proxy.wait()
