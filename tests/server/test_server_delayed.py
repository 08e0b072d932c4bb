"""``after_seconds``: delayed runs wait outside the execution slots, in their thread's line.

Regression of issue 10 (section 3): ten delayed runs used to hold ten slots while they slept,
so every other run waited for them; a delayed run was also lost by a restart (cancelled in
its sleep). Now a delayed run is stored with its time (``_not_before``), waits outside the
slots, can be cancelled or replaced while it waits, and still runs, at its time, after a
restart.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import pytest
from runtime_support import runtime_server, within

from stepgraph.server.runtime.eventlog import RunLog
from stepgraph.server.runtime.queue import LocalRunQueue, RunJob

FAR = 3600.0
"""A delay no test waits for."""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = runtime_server(tmp_path_factory.mktemp("delayed") / "db.sqlite", n_jobs=2, heartbeat=0.3)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def c(srv: Any) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=srv.url, api_key=None)


def _status(c: Any, run: dict[str, Any]) -> str:
    return c.runs.get(run["thread_id"], run["run_id"])["status"]


def test_delayed_runs_hold_no_slot(c: Any, srv: Any) -> None:
    delayed = [c.runs.create(c.threads.create()["thread_id"], "simple", input={"value": "d"}, after_seconds=FAR)
               for _ in range(10)]
    tid = c.threads.create()["thread_id"]
    out = within(lambda: c.runs.wait(tid, "simple", input={"value": "x"}), "a run behind ten delayed runs")
    assert out == {"value": "xab", "steps": ["a", "b"]}
    assert [_status(c, run) for run in delayed] == ["pending"] * 10
    for run in delayed:  # a delayed run is cancelled while it waits: it never runs
        c.runs.cancel(run["thread_id"], run["run_id"], wait=True)
        assert _status(c, run) == "interrupted"
        assert c.threads.get_state(run["thread_id"])["values"] == {}
    assert srv.ctx.queue.active() == []


def test_multitask_strategies_while_a_delayed_run_waits(c: Any) -> None:
    from langgraph_sdk.errors import ConflictError

    tid = c.threads.create()["thread_id"]
    delayed = c.runs.create(tid, "simple", input={"value": "late"}, after_seconds=FAR)
    with pytest.raises(ConflictError):
        c.runs.create(tid, "simple", input={"value": "r"}, multitask_strategy="reject")
    # enqueue: a run that is eligible at once goes before the one still waiting for its time
    now = c.runs.wait(tid, "simple", input={"value": "e"}, multitask_strategy="enqueue")
    assert now["value"] == "eab" and _status(c, delayed) == "pending"
    # interrupt: the waiting run is cancelled and the new one runs
    out = within(lambda: c.runs.wait(tid, "simple", input={"value": "i"}, multitask_strategy="interrupt"),
                 "the replacement of a delayed run")
    assert out["value"] == "iab" and _status(c, delayed) == "interrupted"
    # rollback: the waiting run is deleted
    other = c.runs.create(tid, "simple", input={"value": "late"}, after_seconds=FAR)
    out = within(lambda: c.runs.wait(tid, "simple", input={"value": "r"}, multitask_strategy="rollback"),
                 "the replacement of a delayed run")
    assert out["value"] == "rab"
    assert other["run_id"] not in [r["run_id"] for r in c.runs.list(tid)]


def test_delayed_run_survives_a_restart_and_runs_at_its_time(tmp_path: Any) -> None:
    from langgraph_sdk import get_sync_client

    db = tmp_path / "db.sqlite"
    delay = 2.0
    srv = runtime_server(db, heartbeat=0.3)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        tid = c.threads.create()["thread_id"]
        run = c.runs.create(tid, "simple", input={"value": "s"}, after_seconds=delay)
    finally:
        srv.stop()  # before the run is due
    srv = runtime_server(db, heartbeat=0.3)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        assert within(lambda: c.runs.join(tid, run["run_id"]), "the delayed run after a restart") == \
            {"value": "sab", "steps": ["a", "b"]}
        assert _status(c, run) == "success"
        first = min(datetime.fromisoformat(h["created_at"]).timestamp() for h in c.threads.get_history(tid))
        created = datetime.fromisoformat(run["created_at"]).timestamp()
        assert first >= created + delay  # its first checkpoint is not earlier than its time
    finally:
        srv.stop()


# -- the queue alone ---------------------------------------------------------------------------
def _job(thread_id: str, run_id: str, not_before: float = 0.0) -> RunJob:
    run = {"run_id": run_id, "thread_id": thread_id, "kwargs": {}, "_not_before": not_before}
    return RunJob(run=run, log=RunLog(run_id, resumable=False))


async def test_queue_orders_a_thread_by_eligibility_and_keeps_slots_free() -> None:
    started: list[str] = []
    release = asyncio.Event()

    async def execute(job: RunJob) -> None:
        started.append(job.run_id)
        if job.run_id == "block":
            await release.wait()

    async def dropped(job: RunJob) -> None:
        started.append(f"dropped:{job.run_id}")

    queue = LocalRunQueue(execute, dropped, n_jobs=1)
    later = time.time() + FAR
    waiting = [_job(f"t{i}", f"late{i}", later) for i in range(5)]
    for job in waiting:
        queue.submit(job)
    soon = time.time() + 0.2
    queue.submit(_job("a", "block"))
    queue.submit(_job("b", "due", soon))  # eligible after the delay, then behind `block` for the slot
    queue.submit(_job("b", "now"))  # same thread, eligible first: runs first
    await asyncio.sleep(0.05)
    assert started == ["block"]  # one slot: the late jobs hold none, `now` waits for the slot
    release.set()
    await asyncio.wait_for(asyncio.gather(*(queue.job(r).done.wait() for r in ("block", "now", "due"))), 30)
    assert started == ["block", "now", "due"]
    assert [j.run_id for j in queue.active()] == [f"late{i}" for i in range(5)]
    queue.cancel(waiting[0], "interrupt")
    await asyncio.wait_for(waiting[0].done.wait(), 30)
    assert started[-1] == "dropped:late0"
    await queue.shutdown()
