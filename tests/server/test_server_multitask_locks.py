"""``multitask_strategy="interrupt"``/``"rollback"`` against a run blocked in a sync node.

Regression of issue 10 (section 3): admission took one global lock and waited inside it for
the interrupted run, so while thread A's run sat in a blocking sync node, runs on every other
thread stalled. Now admission is per thread and waits for nothing; the replacement run starts
only once the interrupted one has really stopped (its sync node returned). Asserted by the
order of events, never by durations: thread B's run completes while A's node is still
blocked (its ``exit`` not recorded yet), and A's replacement enters only after A's node exits.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from runtime_graphs import gate, position, seen
from runtime_support import runtime_server, wait_until, within


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = runtime_server(tmp_path_factory.mktemp("locks") / "db.sqlite", heartbeat=0.3)
    try:
        yield server
    finally:
        server.stop()


def _client(srv: Any) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=srv.url, api_key=None)


@pytest.mark.parametrize(("graph", "strategy"), [
    ("gate_single", "interrupt"), ("gate_fanout", "interrupt"), ("gate_fanout", "rollback"),
])
def test_blocked_thread_does_not_stall_other_threads(srv: Any, graph: str, strategy: str) -> None:
    c = _client(srv)
    a, b = c.threads.create()["thread_id"], c.threads.create()["thread_id"]
    first, second, other = (f"{name}-{uuid.uuid4().hex[:8]}" for name in ("first", "second", "other"))
    gate(second).set()
    gate(other).set()
    try:
        blocked = c.runs.create(a, graph, input={"key": first})
        wait_until(lambda: seen("enter", first), "the first run entering its blocking node")
        replacement = within(lambda: _client(srv).runs.create(a, graph, input={"key": second},
                                                              multitask_strategy=strategy),
                             f"creating a run with multitask_strategy={strategy}")
        out = within(lambda: _client(srv).runs.wait(b, graph, input={"key": other}),
                     "a run on another thread")
        assert f"hold:{other}" in out["steps"]
        assert not seen("exit", first)  # B completed while A's node was still blocked
        assert not seen("enter", second)  # ... and A's replacement has not started
        assert c.runs.get(a, replacement["run_id"])["status"] == "pending"
    finally:
        gate(first).set()
    final = within(lambda: c.runs.join(a, replacement["run_id"]), "the replacement run")
    assert f"hold:{second}" in final["steps"]
    assert position("exit", first) < position("enter", second)  # started after the old one stopped
    runs = {r["run_id"]: r["status"] for r in c.runs.list(a)}
    if strategy == "rollback":
        assert blocked["run_id"] not in runs
        assert f"hold:{first}" not in c.threads.get_state(a)["values"]["steps"]
    else:
        assert runs[blocked["run_id"]] == "interrupted"
    assert runs[replacement["run_id"]] == "success"
    assert len(srv.ctx.service._locks) == 0  # no lock outlives its admission
