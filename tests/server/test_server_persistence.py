"""Restarts keep threads, runs, assistants and checkpoints; PostgreSQL works like SQLite."""

from __future__ import annotations

import socket
import time
import uuid

import pytest
from server_harness import start_server

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def _pg_reachable() -> str | None:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            pass
    except OSError as exc:
        return f"PostgreSQL not reachable at 127.0.0.1:5432 ({exc})"
    try:
        import psycopg

        psycopg.connect(PG_DSN, connect_timeout=2).close()
    except Exception as exc:  # noqa: BLE001
        return f"cannot connect to {PG_DSN}: {exc}"
    return None


def test_restart_keeps_everything(tmp_path) -> None:
    from langgraph_sdk import get_sync_client

    db = tmp_path / "db.sqlite"
    srv = start_server(db)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        tid = c.threads.create(metadata={"keep": "me"})["thread_id"]
        c.runs.wait(tid, "interrupt", input={"value": "x"})
        assistant = c.assistants.create(graph_id="simple", name="persisted")
        run_ids = [r["run_id"] for r in c.runs.list(tid)]
        history = c.threads.get_history(tid)
        c.store.put_item(["persist"], "k", {"v": 1})
    finally:
        srv.stop()
    srv = start_server(db)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        thread = c.threads.get(tid)
        assert thread["metadata"]["keep"] == "me" and thread["status"] == "interrupted"
        assert [r["run_id"] for r in c.runs.list(tid)] == run_ids
        assert c.threads.get_history(tid) == history
        assert c.assistants.get(assistant["assistant_id"])["name"] == "persisted"
        assert c.store.get_item(["persist"], "k")["value"] == {"v": 1}
        # the interrupted thread resumes after the restart
        out = c.runs.wait(tid, "interrupt", command={"resume": "later"})
        assert out == {"value": "x|later", "answer": "later", "steps": ["ask", "after"]}
    finally:
        srv.stop()


def test_restart_during_a_run(tmp_path) -> None:
    from langgraph_sdk import get_sync_client

    db = tmp_path / "db.sqlite"
    srv = start_server(db)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        tid = c.threads.create()["thread_id"]
        running = c.runs.create(tid, "two_step", input={"delay": 2}, durability="sync")
        queued = c.runs.create(tid, "simple", input={"value": "q"})
        deadline = time.monotonic() + 10
        while c.runs.get(tid, running["run_id"])["status"] != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
    finally:
        srv.stop()
    srv = start_server(db)
    try:  # a stopping server gives its runs back to the queue: the next one resumes them
        c = get_sync_client(url=srv.url, api_key=None)
        assert c.runs.join(tid, running["run_id"])["steps"] == ["a", "b"]  # `a` committed, not run again
        resumed = c.runs.get(tid, running["run_id"])
        assert resumed["status"] == "success" and resumed["kwargs"]["config"]["metadata"]["run_attempt"] == 2
        assert c.runs.join(tid, queued["run_id"]) is not None
        assert c.runs.get(tid, queued["run_id"])["status"] == "success"
        assert c.threads.get(tid)["status"] in ("idle", "interrupted")
    finally:
        srv.stop()


def test_postgres_basic_flow() -> None:
    reason = _pg_reachable()
    if reason:
        pytest.skip(reason)
    from serve_harness import pg_schema_url

    with pg_schema_url() as url:
        _postgres_basic_flow(url)


def _postgres_basic_flow(url: str) -> None:
    from langgraph_sdk import get_sync_client

    srv = start_server(database_url=url)
    try:
        c = get_sync_client(url=srv.url, api_key=None)
        assert srv.ctx.backend.name == "postgres"
        tid = c.threads.create(metadata={"pg": uuid.uuid4().hex})["thread_id"]
        parts = list(c.runs.stream(tid, "nested", input={"value": "x"}, stream_mode="values"))
        assert parts[-1].data == {"value": "xp12f", "steps": ["prep", "finish"]}
        assert c.runs.wait(tid, "nested", input=None) == {"value": "xp12f", "steps": ["prep", "finish"]}
        assert len(c.threads.get_history(tid)) >= 5
        c.runs.wait(tid, "interrupt", input={"value": "x"})
        assert c.threads.get(tid)["status"] == "interrupted"
        copy = c.threads.copy(tid)
        assert c.threads.get_state(copy["thread_id"])["next"] == ["ask"]
        ns = ["pgtest", uuid.uuid4().hex]
        c.store.put_item(ns, "k", {"a": 1})
        assert c.store.get_item(ns, "k")["value"] == {"a": 1}
        c.store.delete_item(ns, "k")
        for thread_id in (tid, copy["thread_id"]):
            c.threads.delete(thread_id)
    finally:
        srv.stop()
