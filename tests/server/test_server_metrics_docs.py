"""``/metrics`` (Prometheus text through ``prometheus_client``'s parser, and ``?format=json``)
and the local ``/docs`` API reference page."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _wait_idle(http: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        doc = http.get("/metrics", params={"format": "json"}).json()
        if doc["runs"]["pending"] == 0 and doc["runs"]["running"] == 0:
            return doc
        assert time.monotonic() < deadline, doc
        time.sleep(0.05)


def test_metrics_count_runs_per_graph_and_status(client: Any, http: Any) -> None:
    before = _wait_idle(http)
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "simple", input={"value": "x"})
    client.runs.wait(thread["thread_id"], "simple", input={"value": "y"})
    failed = client.threads.create()
    client.runs.wait(failed["thread_id"], "fail", input={}, raise_error=False)
    after = _wait_idle(http)
    simple_before = before["runs"]["by_graph"].get("simple", {"created": 0, "success": 0})
    simple = after["runs"]["by_graph"]["simple"]
    assert simple["created"] - simple_before["created"] == 2
    assert simple["success"] - simple_before["success"] == 2
    assert after["runs"]["by_graph"]["fail"]["error"] >= 1
    assert after["runs"]["succeeded"] - before["runs"]["succeeded"] == 2
    assert after["runs"]["failed"] - before["runs"]["failed"] >= 1
    assert after["run_duration_seconds"]["count"] - before["run_duration_seconds"]["count"] == 3
    assert after["queue_wait_seconds"]["count"] - before["queue_wait_seconds"]["count"] == 3
    assert after["queue"]["n_pending"] == 0 and after["workers"]["max"] >= 1
    assert after["run_duration_seconds"]["buckets"]["+Inf"] == after["run_duration_seconds"]["count"]

    res = http.get("/metrics")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/plain")
    samples = _samples(res.text)
    assert samples[("lg_api_num_pending_runs", ())] == 0
    assert samples[("lg_api_runs_created_total", (("graph_id", "simple"),))] == simple["created"]
    assert samples[("lg_api_runs_finished_total", (("graph_id", "simple"), ("status", "success")))] == \
        simple["success"]
    key = ("lg_api_run_duration_seconds_count", (("graph_id", "simple"), ("status", "success")))
    assert samples[key] == simple["success"]
    inf = ("lg_api_run_duration_seconds_bucket", (("graph_id", "simple"), ("le", "+Inf"), ("status", "success")))
    assert samples[inf] == simple["success"]
    assert ("lg_api_run_queue_wait_seconds_sum", (("graph_id", "simple"),)) in samples


def test_metrics_show_pending_and_running_runs(client: Any, http: Any) -> None:
    thread = client.threads.create()
    client.runs.create(thread["thread_id"], "slow", input={"delay": 1.5})
    client.runs.create(thread["thread_id"], "slow", input={"delay": 0})
    deadline = time.monotonic() + 20
    while True:
        doc = http.get("/metrics", params={"format": "json"}).json()
        slow = doc["runs"]["by_graph"].get("slow", {})
        if slow.get("running") == 1 and slow.get("pending") == 1:
            break
        assert time.monotonic() < deadline, doc
        time.sleep(0.02)
    assert doc["queue"]["n_running"] >= 1 and doc["queue"]["n_pending"] >= 1
    assert doc["queue"]["pending_runs_wait_time_max_secs"] >= 0
    samples = _samples(http.get("/metrics").text)
    assert samples[("lg_api_runs_by_graph", (("graph_id", "slow"), ("status", "running")))] == 1
    _wait_idle(http)


def test_metrics_format_is_validated(http: Any) -> None:
    assert http.get("/metrics", params={"format": "xml"}).status_code == 422


def test_docs_page_is_local_and_renders_the_openapi_document(http: Any) -> None:
    res = http.get("/docs")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/html")
    page = res.text
    assert "openapi.json" in page
    assert not re.search(r"""(src|href)=["']https?://""", page)  # nothing from a CDN
    assert "fetch(" in page and "<script>" in page
    policy = res.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy and "connect-src 'self'" in policy
    spec = http.get("/openapi.json").json()
    assert "/docs" in spec["paths"] and "/metrics" in spec["paths"]
    assert set(spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == {"text/plain", "application/json"}


@pytest.mark.skipif(__import__("shutil").which("node") is None, reason="node is not installed")
def test_docs_script_parses(http: Any, tmp_path: Any) -> None:
    """The page's script is valid JavaScript (``node --check``)."""
    import subprocess

    script = re.search(r"<script>(.*?)</script>", http.get("/docs").text, re.S)
    assert script is not None
    path = tmp_path / "docs.js"
    path.write_text(script.group(1))
    done = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
