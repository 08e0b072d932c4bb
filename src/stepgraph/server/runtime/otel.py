"""OpenTelemetry spans for runs and their nodes (the ``opentelemetry`` extra).

When ``opentelemetry-api`` is installed and the process has a tracer provider (set by the
application, ``opentelemetry-instrument`` or the SDK's environment configuration), every run
gets a ``stepgraph.run`` span (attributes: run, thread, assistant and graph ids, final status;
error status with the exception for a failed run), and every node task of it a child span
named after the node (``stepgraph.node``, ``stepgraph.task_id``; error status when it raised),
nested under its parent node's span for subgraph tasks that are streamed. Node spans follow the
engine's ``tasks`` stream, which the executor requests only when tracing is on. Without the
package or a provider nothing is recorded and runs do no extra work.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunTracing", "run_tracing"]


def _tracer() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None  # no provider configured: spans would go nowhere
    return trace.get_tracer("stepgraph.server")


class RunTracing:
    """The spans of one run."""

    def __init__(self, tracer: Any, attributes: dict[str, str]) -> None:
        from opentelemetry import trace

        self._trace = trace
        self.tracer = tracer
        self.span = tracer.start_span("stepgraph.run", attributes=attributes)
        self._tasks: dict[str, Any] = {}

    def feed(self, part: Any) -> None:
        """Open or close a node span for one ``tasks`` part of the engine stream."""
        if len(part) == 3:
            ns, mode, payload = part
        else:
            (mode, payload), ns = part, ()
        if mode != "tasks" or not isinstance(payload, dict):
            return
        task_id = str(payload.get("id"))
        if "input" in payload:
            parent = self.span
            if ns:
                parent = self._tasks.get(str(ns[-1]).rpartition(":")[2], self.span)
            context = self._trace.set_span_in_context(parent)
            self._tasks[task_id] = self.tracer.start_span(
                str(payload.get("name")), context=context,
                attributes={"stepgraph.node": str(payload.get("name")), "stepgraph.task_id": task_id,
                            "stepgraph.namespace": "|".join(str(s) for s in ns)})
            return
        span = self._tasks.pop(task_id, None)
        if span is None:
            return
        error = payload.get("error")
        if error:
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error)))
        elif payload.get("interrupts"):
            span.set_attribute("stepgraph.interrupted", True)
        span.end()

    def finish(self, status: str, error: BaseException | None = None) -> None:
        """End the open node spans and the run's span with the run's final status."""
        for span in self._tasks.values():
            span.set_attribute("stepgraph.cancelled", True)
            span.end()
        self._tasks.clear()
        self.span.set_attribute("stepgraph.status", status)
        if error is not None:
            self.span.record_exception(error)
            self.span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        self.span.end()


def run_tracing(run: dict[str, Any]) -> RunTracing | None:
    """The spans of ``run`` (``None`` when tracing is off)."""
    tracer = _tracer()
    if tracer is None:
        return None
    meta = run.get("metadata") or {}
    return RunTracing(tracer, {
        "stepgraph.run_id": str(run.get("run_id")), "stepgraph.thread_id": str(run.get("thread_id")),
        "stepgraph.assistant_id": str(run.get("assistant_id")), "stepgraph.graph_id": str(meta.get("graph_id")),
    })
