"""The server's run buffers are bounded by bytes: run event logs, finished logs kept for replay,
v3 thread logs and finished runs kept for ``join``; readers asking for dropped events get a
clear answer (410 before a stream starts, an ``EventsEvicted`` error event or a gap comment
when they fell behind), never a hang.

Regression of issue 10 (section 3): these buffers were bounded by counts only (or not at all:
a running run's log grew without limit, and 1000 finished runs kept their whole logs).
Sizes are the encoded bytes stored (``RunLog.cost``, frame lengths), recomputed here from
what the buffers hold.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from runtime_support import runtime_server, within

from stepgraph.server.runtime.eventlog import EVICTED, MemoryEventLog, RunLog
from stepgraph.server.runtime.limits import LimitError, RuntimeLimits
from stepgraph.server.runtime.queue import LocalRunQueue, RunJob
from stepgraph.server.runtime.threadlog import EventFilter, ThreadLogs
from stepgraph.server.serde import dumps

KiB = 1024
LIMITS = RuntimeLimits(run_log_bytes=64 * KiB, finished_logs_bytes=256 * KiB, thread_log_bytes=32 * KiB,
                       thread_logs_bytes=96 * KiB, finished_runs_bytes=256 * KiB)
BLOB = 20_000
"""Characters of the blob each ``pump`` step writes (every ``values`` event carries one)."""


def _held(log: RunLog) -> int:
    """The bytes a log holds, recomputed from its stored events."""
    return sum(len(e.name) + len(e.data) + 32 for e in log.events)


# -- one run's log, and the finished logs --------------------------------------------------------
async def test_run_log_drops_oldest_and_tells_readers() -> None:
    log = RunLog("r", resumable=True, max_bytes=10 * KiB)
    first = log.append("metadata", b'{"run_id": "r"}')
    reader = log.follow()
    assert (await anext(reader)).id == first.id
    for i in range(100):
        log.append("values", dumps({"i": i, "blob": "x" * 500}))
        assert log.nbytes == _held(log) <= 10 * KiB
    assert log.first > 0 and log.events[-1].data == dumps({"i": 99, "blob": "x" * 500})
    gone = await anext(reader)  # it fell behind the dropped events: told, then its stream ends
    assert gone.name == "error" and json.loads(gone.data)["error"] == EVICTED
    with pytest.raises(StopAsyncIteration):
        await anext(reader)
    assert log.missed(first.key) and not log.missed(log.events[0].key)
    late = [e async for e in _take(log.follow(after=first.key), 1)]  # asks for dropped events
    assert json.loads(late[0].data)["error"] == EVICTED
    log.close()
    kept = [e async for e in log.follow(after=log.events[0].key)]  # what is kept replays normally
    assert [e.key for e in kept] == [e.key for e in log.events[1:]]


async def _take(it: Any, n: int) -> Any:
    async for item in it:
        yield item
        n -= 1
        if n == 0:
            return


def test_finished_logs_have_one_budget_oldest_first() -> None:
    logs = MemoryEventLog(max_bytes=8 * KiB, finished_bytes=20 * KiB)
    for i in range(10):
        log = logs.open(f"r{i}", resumable=True)
        for _ in range(20):
            log.append("values", b"y" * 400)
        assert log.nbytes <= 8 * KiB
        logs.close(f"r{i}")
        assert logs.finished_nbytes <= 20 * KiB
    kept = [f"r{i}" for i in range(10) if logs.get(f"r{i}") is not None]
    assert kept == [f"r{i}" for i in range(10 - len(kept), 10)] and 0 < len(kept) < 10
    assert logs.finished_nbytes == sum(_held(logs.get(r)) for r in kept)
    logs.discard(kept[-1])
    assert logs.finished_nbytes == sum(_held(logs.get(r)) for r in kept[:-1])


# -- v3 thread logs ------------------------------------------------------------------------------
async def test_thread_logs_have_a_total_budget_and_gaps_are_told() -> None:
    logs = ThreadLogs(max_bytes=16 * KiB, total_bytes=40 * KiB)
    flt = EventFilter.parse({"channels": ["values"]})
    busy = logs.open("busy")
    busy.writers += 1
    reader = busy.follow(flt, heartbeat=30)
    busy.append("values", (), {"i": -1})
    assert (await anext(reader)).seq == 1
    for i in range(30):
        for tid in ("busy", f"idle{i}"):
            logs.open(tid).append("values", (), {"i": i, "blob": "z" * 700})
        assert logs.nbytes == sum(len(e.frame) for log in logs._logs.values() for e in log.events)
        assert logs.nbytes <= 40 * KiB
        assert all(log.nbytes <= 16 * KiB for log in logs._logs.values())
    assert logs.get("idle0") is None and logs.get("busy") is busy  # idle logs went first
    assert busy.dropped_through > 1 and busy.missed(1) and not busy.missed(busy.dropped_through)
    gap = await anext(reader)  # the reader fell behind: a comment says so, and the stream ends
    assert gap.frame.startswith(b": events up to seq") and gap.frame.endswith(b"\r\n\r\n")
    with pytest.raises(StopAsyncIteration):
        await anext(reader)


# -- finished runs kept for join -------------------------------------------------------------------
async def test_finished_runs_kept_within_their_budget() -> None:
    async def execute(job: RunJob) -> None:
        job.result = {"blob": "r" * 5000}

    async def dropped(job: RunJob) -> None:
        pass

    queue = LocalRunQueue(execute, dropped, finished_bytes=30 * KiB)
    jobs = []
    for i in range(20):
        job = RunJob(run={"run_id": f"r{i}", "thread_id": f"t{i}", "kwargs": {"input": "i" * 1000}},
                     log=RunLog(f"r{i}", resumable=False))
        queue.submit(job)
        await asyncio.wait_for(job.done.wait(), 30)
        jobs.append(job)
        assert queue.finished_nbytes <= 30 * KiB
    kept = [j for j in jobs if queue.job(j.run_id) is j]
    assert kept == jobs[-len(kept):] and 0 < len(kept) < 20
    assert queue.finished_nbytes == sum(len(dumps(j.result)) + len(dumps(j.run)) for j in kept)
    await queue.shutdown()


def test_limits_from_the_environment() -> None:
    limits = RuntimeLimits.from_env({"STEPGRAPH_RUN_LOG_BYTES": "8MiB", "STEPGRAPH_MAX_ATTEMPTS": "5"})
    assert limits.run_log_bytes == 8 << 20 and limits.max_attempts == 5
    assert limits.finished_logs_bytes == RuntimeLimits().finished_logs_bytes
    for env in ({"STEPGRAPH_THREAD_LOG_BYTES": "big"}, {"STEPGRAPH_MAX_ATTEMPTS": "0"}):
        with pytest.raises(LimitError, match=next(iter(env))):
            RuntimeLimits.from_env(env)


# -- through the server ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # an in-memory database: runs, their event logs and the v3 thread logs are kept in this
    # process (``LocalRunQueue``, ``MemoryEventLog``), within these budgets
    server = runtime_server(":memory:", heartbeat=0.3, limits=LIMITS)
    try:
        yield server
    finally:
        server.stop()


def test_budgets_hold_after_large_runs(srv: Any) -> None:
    from langgraph_sdk import get_sync_client

    c = get_sync_client(url=srv.url, api_key=None)
    ctx = srv.ctx
    runs = []
    for _ in range(12):
        tid = c.threads.create()["thread_id"]
        run = c.runs.create(tid, "pump", input={"size": BLOB, "count": 8}, stream_mode=["values", "updates"],
                            stream_resumable=True)
        out = within(lambda tid=tid, run=run: c.runs.join(tid, run["run_id"]), "a large resumable run")
        assert out["n"] == 8
        runs.append((tid, run))
    held = [ctx.events.get(rid) for rid in (r["run_id"] for r in _all_runs(c, runs))]
    kept = [log for log in held if log is not None]
    assert all(log.nbytes == _held(log) <= LIMITS.run_log_bytes for log in kept)
    assert ctx.events.finished_nbytes == sum(log.nbytes for log in kept) <= LIMITS.finished_logs_bytes
    assert 0 < len(kept) < len(held)  # the oldest finished logs were dropped
    assert ctx.queue.finished_nbytes <= LIMITS.finished_runs_bytes
    evicted = next(r for r, log in zip(_all_runs(c, runs), held, strict=True) if log is None)
    trimmed = next(r for r, log in zip(_all_runs(c, runs), held, strict=True) if log is not None and log.first)
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        for run in (evicted, trimmed):  # replaying dropped events: a clear 410, not an empty stream
            url = f"/threads/{run['thread_id']}/runs/{run['run_id']}/stream"
            answer = http.get(url, headers={"Last-Event-ID": "1-0"})
            assert answer.status_code == 410 and "join the run" in answer.json()["detail"]
        log = ctx.events.get(trimmed["run_id"])
        url = f"/threads/{trimmed['thread_id']}/runs/{trimmed['run_id']}/stream"
        replay = http.get(url, headers={"Last-Event-ID": log.events[0].id})  # what is kept replays
        assert replay.status_code == 200 and replay.text.count("event: ") == len(log.events) - 1
    # a run whose buffers were all dropped still joins (from storage)
    assert c.runs.join(evicted["thread_id"], evicted["run_id"])["n"] == 8


def _all_runs(c: Any, runs: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [c.runs.list(tid)[0] for tid, _ in runs]


def test_v3_stream_asking_for_dropped_events_is_refused(srv: Any) -> None:
    tid = str(uuid.uuid4())
    log = srv.ctx.thread_logs.open(tid)
    for i in range(80):
        log.append("values", (), {"i": i, "blob": "v" * 1000})
    assert log.nbytes <= LIMITS.thread_log_bytes and log.dropped_through > 0
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        answer = http.post(f"/threads/{tid}/stream/events", json={"channels": ["values"], "since": 1})
        assert answer.status_code == 410 and f"seq {log.dropped_through}" in answer.json()["detail"]
    srv.ctx.thread_logs.discard(tid)
