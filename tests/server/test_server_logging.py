"""Structured logs: ``--log-format json`` (or ``LOG_JSON=true``) writes one JSON object per line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from serve_harness import serve_config

from stepgraph.server.logjson import JsonFormatter, log_format_from_env

GRAPH = '''
from typing import TypedDict
from stepgraph.graph import StateGraph, START, END

class S(TypedDict):
    x: int

def bad(state: S) -> S:
    raise RuntimeError("kaput")

b = StateGraph(S)
b.add_node("bad", bad)
b.add_edge(START, "bad")
b.add_edge("bad", END)
graph = b.compile()
'''


def _config(tmp: Path) -> Path:
    (tmp / "g.py").write_text(GRAPH)
    path = tmp / "langgraph.json"
    path.write_text(json.dumps({"graphs": {"g": "./g.py:graph"}}))
    return path


@pytest.mark.parametrize("how", ["flag", "env"])
def test_json_logs(tmp_path: Path, how: str) -> None:
    args = ("--log-format", "json") if how == "flag" else ()
    env = {"LOG_JSON": "true"} if how == "env" else None
    with serve_config(_config(tmp_path), tmp_path, args=args, env=env) as (url, log):
        with httpx.Client(base_url=url, timeout=30) as http:
            thread = http.post("/threads", json={}).json()["thread_id"]
            http.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "g", "input": {"x": 1}})
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    assert records, log.read_text()
    assert all({"timestamp", "level", "logger", "message"} <= set(r) for r in records)
    messages = " ".join(r["message"] for r in records)
    assert "stepgraph server: 1 graph(s) [g]" in messages
    assert any(r["logger"].startswith("uvicorn") for r in records)  # uvicorn's records too
    assert any("kaput" in r["message"] for r in records)
    assert not any(line.startswith("INFO:") for line in log.read_text().splitlines())


def test_text_logs_by_default(tmp_path: Path) -> None:
    with serve_config(_config(tmp_path), tmp_path) as (_url, log):
        pass
    assert any(line.startswith("INFO:") for line in log.read_text().splitlines())


def test_formatter_keeps_extra_fields_and_exceptions(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        raise ValueError("nope")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "run %s failed", ("r1",),
                                   __import__("sys").exc_info())
    record.run_id = "r1"
    out = json.loads(JsonFormatter().format(record))
    assert out["message"] == "run r1 failed" and out["level"] == "error" and out["run_id"] == "r1"
    assert "ValueError: nope" in out["exc_info"]
    monkeypatch.setenv("LOG_JSON", "false")
    assert log_format_from_env() == "text"
    monkeypatch.setenv("LOG_JSON", "1")
    assert log_format_from_env() == "json"
