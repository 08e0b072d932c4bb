"""OpenTelemetry spans for runs and nodes (skipped without the ``opentelemetry`` extra)."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from stepgraph.server.runtime import otel  # noqa: E402


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(otel, "_tracer", lambda: provider.get_tracer("test"))
    return exporter


def _finished(exporter: InMemorySpanExporter, run_id: str) -> list[Any]:
    deadline = time.monotonic() + 20
    while True:
        found = exporter.get_finished_spans()
        runs = [s for s in found if s.name == "stepgraph.run" and s.attributes["stepgraph.run_id"] == run_id]
        if runs:
            trace_id = runs[0].context.trace_id
            return [s for s in found if s.context.trace_id == trace_id]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_run_and_its_nodes_are_spans(spans: InMemorySpanExporter, client: Any) -> None:
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "simple", input={"value": "x"})
    client.runs.join(thread["thread_id"], run["run_id"])
    found = _finished(spans, run["run_id"])
    root = next(s for s in found if s.name == "stepgraph.run")
    assert root.attributes["stepgraph.graph_id"] == "simple"
    assert root.attributes["stepgraph.thread_id"] == thread["thread_id"]
    assert root.attributes["stepgraph.status"] == "success"
    nodes = sorted((s for s in found if s.name != "stepgraph.run"), key=lambda s: s.start_time)
    assert [s.name for s in nodes] == ["a", "b"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in nodes)
    assert all(root.start_time <= s.start_time and s.end_time <= root.end_time for s in nodes)


def test_a_failed_run_has_error_status(spans: InMemorySpanExporter, client: Any) -> None:
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "fail", input={})
    client.runs.join(thread["thread_id"], run["run_id"])
    found = _finished(spans, run["run_id"])
    root = next(s for s in found if s.name == "stepgraph.run")
    assert root.status.status_code == StatusCode.ERROR and root.attributes["stepgraph.status"] == "error"
    assert any(e.name == "exception" for e in root.events)
    assert any(s.status.status_code == StatusCode.ERROR for s in found if s.name != "stepgraph.run")


def test_tracing_is_off_without_a_provider() -> None:
    assert otel._tracer() is None  # the API's default proxy provider: nothing would be exported
    assert otel.run_tracing({"run_id": "r", "metadata": {}}) is None
