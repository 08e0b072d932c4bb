"""``RunMetrics``: what ``GET /metrics`` reports about runs (Prometheus text or JSON).

Counted as runs move through the server (``service`` submits, ``executor`` starts and
finishes): runs created and finished per graph and status, the time a run waited for a slot
after it became eligible (``queue wait``) and how long it ran (``run duration``), both as
histograms. Pending and running runs are read from the queue when asked. The Prometheus
names follow LangGraph's server (``lg_api_`` prefix; ``lg_api_num_pending_runs``,
``lg_api_num_running_runs``, ``lg_api_workers_*``) with stepgraph's run histograms beside them.
The counts live in this process (a restart starts them again, as on LangGraph).
"""

from __future__ import annotations

import bisect
import statistics
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DURATION_BUCKETS", "WAIT_BUCKETS", "RunMetrics"]

WAIT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
_OUTCOME = {"success": "succeeded", "error": "failed", "timeout": "failed", "interrupted": "interrupted"}


@dataclass
class _Histogram:
    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0
    largest: float = 0.0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        value = max(value, 0.0)
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1
        self.largest = max(self.largest, value)

    def cumulative(self) -> list[tuple[str, int]]:
        """``(le, count)`` pairs, cumulative, ending with ``+Inf``."""
        out, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            out.append(("+Inf" if bound == float("inf") else repr(float(bound)), running))
        return out

    def as_json(self) -> dict[str, Any]:
        return {"count": self.n, "sum": round(self.total, 6), "max": round(self.largest, 6),
                "buckets": dict(self.cumulative())}


class RunMetrics:
    """Run counters and histograms of one server; ``active`` lists the queue's live jobs."""

    def __init__(self, active: Callable[[], list[Any]], n_jobs: int,
                 live: Callable[[], Awaitable[list[Any]]] | None = None) -> None:
        self._active = active
        self._live_source = live
        """The queue's pending and running runs when they are in a database (``refresh``)."""
        self._snapshot: list[Any] | None = None
        self.n_jobs = n_jobs
        self._lock = threading.Lock()
        self.created: Counter[str] = Counter()
        self.finished: Counter[tuple[str, str]] = Counter()
        self._wait: dict[str, _Histogram] = {}
        self._duration: dict[tuple[str, str], _Histogram] = {}
        self._started_at: dict[str, float] = {}

    # -- recording --------------------------------------------------------------------------
    def run_created(self, graph_id: str) -> None:
        with self._lock:
            self.created[graph_id] += 1

    def run_started(self, run_id: str, graph_id: str, eligible_at: float) -> None:
        now = time.time()
        with self._lock:
            self._started_at[run_id] = time.monotonic()
            self._wait.setdefault(graph_id, _Histogram(WAIT_BUCKETS)).observe(now - eligible_at)

    def run_finished(self, run_id: str, graph_id: str, status: str) -> None:
        with self._lock:
            self.finished[(graph_id, status)] += 1
            started = self._started_at.pop(run_id, None)
            if started is not None:
                key = (graph_id, status)
                self._duration.setdefault(key, _Histogram(DURATION_BUCKETS)).observe(time.monotonic() - started)

    # -- reading ----------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Read the pending and running runs from the queue's database (before a reading)."""
        if self._live_source is not None:
            self._snapshot = await self._live_source()

    def _live(self) -> tuple[Counter[str], Counter[str], list[float]]:
        pending: Counter[str] = Counter()
        running: Counter[str] = Counter()
        waits: list[float] = []
        now = time.time()
        for job in self._snapshot if self._snapshot is not None else self._active():
            graph_id = str((job.run.get("metadata") or {}).get("graph_id"))
            if job.status == "running":
                running[graph_id] += 1
            else:
                pending[graph_id] += 1
                waits.append(max(now - job.not_before, 0.0))
        return pending, running, waits

    def as_json(self) -> dict[str, Any]:
        """The ``?format=json`` document."""
        pending, running, waits = self._live()
        with self._lock:
            graphs = sorted({*self.created, *(g for g, _ in self.finished), *pending, *running})
            by_graph = {}
            for g in graphs:
                done = {s: n for (gg, s), n in self.finished.items() if gg == g}
                by_graph[g] = {"created": self.created[g], "pending": pending[g], "running": running[g],
                               **{s: done.get(s, 0) for s in ("success", "error", "interrupted")}}
            totals = Counter()
            for (_, status), n in self.finished.items():
                totals[_OUTCOME.get(status, status)] += n
            wait = _Histogram(WAIT_BUCKETS)
            for h in self._wait.values():
                _merge(wait, h)
            duration = _Histogram(DURATION_BUCKETS)
            for h in self._duration.values():
                _merge(duration, h)
            n_running = sum(running.values())
            return {
                "queue": {"n_pending": sum(pending.values()), "n_running": n_running,
                          "pending_runs_wait_time_max_secs": round(max(waits), 6) if waits else None,
                          "pending_runs_wait_time_med_secs": round(statistics.median(waits), 6) if waits else None},
                "workers": {"max": self.n_jobs, "active": n_running, "available": max(self.n_jobs - n_running, 0)},
                "runs": {"created": sum(self.created.values()), "pending": sum(pending.values()),
                         "running": n_running, "succeeded": totals["succeeded"], "failed": totals["failed"],
                         "interrupted": totals["interrupted"], "by_graph": by_graph},
                "queue_wait_seconds": wait.as_json(),
                "run_duration_seconds": duration.as_json(),
            }

    def prometheus(self) -> bytes:
        """The Prometheus text exposition (``prometheus_client``)."""
        from prometheus_client import CollectorRegistry, generate_latest

        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(self))
        return generate_latest(registry)

    def families(self) -> Iterator[Any]:
        """The metric families (``prometheus_client.core``) of the current counts."""
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        pending, running, _ = self._live()
        n_running = sum(running.values())
        for name, text, value in (
                ("lg_api_num_pending_runs", "Runs waiting to start.", sum(pending.values())),
                ("lg_api_num_running_runs", "Runs executing now.", n_running),
                ("lg_api_workers_max", "Runs that may execute at once (n_jobs).", self.n_jobs),
                ("lg_api_workers_active", "Execution slots in use.", n_running),
                ("lg_api_workers_available", "Execution slots free.", max(self.n_jobs - n_running, 0))):
            yield GaugeMetricFamily(name, text, value=value)
        with self._lock:
            live = GaugeMetricFamily("lg_api_runs_by_graph", "Pending and running runs per graph.",
                                     labels=["graph_id", "status"])
            for g in sorted({*pending, *running}):
                live.add_metric([g, "pending"], pending[g])
                live.add_metric([g, "running"], running[g])
            yield live
            created = CounterMetricFamily("lg_api_runs_created", "Runs created, per graph.", labels=["graph_id"])
            for g, n in sorted(self.created.items()):
                created.add_metric([g], n)
            yield created
            finished = CounterMetricFamily("lg_api_runs_finished", "Runs finished, per graph and status.",
                                           labels=["graph_id", "status"])
            for (g, st), n in sorted(self.finished.items()):
                finished.add_metric([g, st], n)
            yield finished
            wait = HistogramMetricFamily("lg_api_run_queue_wait_seconds",
                                         "Time from a run becoming eligible to its start.", labels=["graph_id"])
            for g, h in sorted(self._wait.items()):
                wait.add_metric([g], h.cumulative(), sum_value=h.total)
            yield wait
            duration = HistogramMetricFamily("lg_api_run_duration_seconds",
                                             "Time a run executed, per graph and status.",
                                             labels=["graph_id", "status"])
            for (g, st), h in sorted(self._duration.items()):
                duration.add_metric([g, st], h.cumulative(), sum_value=h.total)
            yield duration


class _Collector:
    def __init__(self, metrics: RunMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        return self.metrics.families()


def _merge(into: _Histogram, other: _Histogram) -> None:
    into.counts = [a + b for a, b in zip(into.counts, other.counts, strict=True)]
    into.total += other.total
    into.n += other.n
    into.largest = max(into.largest, other.largest)
