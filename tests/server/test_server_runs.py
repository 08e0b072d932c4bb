"""Run lifecycle: concurrency, cancel, disconnects, multitask strategies, resumable streams."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest


def _wait_status(client, tid: str, rid: str, statuses: set[str], limit: float = 10.0) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = client.runs.get(tid, rid)["status"]
        if status in statuses:
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {rid} never reached {statuses}")


def _sse_events(text: str) -> list[tuple[str, str, str | None]]:
    """``(event, data, id)`` of an SSE body (CRLF framing)."""
    out = []
    for block in text.split("\r\n\r\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\r\n") if ": " in line and not line.startswith(":"))
        if "event" in fields:
            out.append((fields["event"], fields.get("data", ""), fields.get("id")))
    return out


def test_runs_on_different_threads_run_concurrently(client) -> None:
    def one(_: int) -> dict:
        tid = client.threads.create()["thread_id"]
        return client.runs.wait(tid, "slow", input={"delay": 0.6, "value": "c"})

    start = time.monotonic()
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(one, range(6)))
    assert all(r["value"] == "cz" for r in results)
    assert time.monotonic() - start < 2.5


def test_cancel_keeps_committed_checkpoints(client) -> None:
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(tid, "two_step", input={"delay": 30})
    _wait_status(client, tid, run["run_id"], {"running"})
    deadline = time.monotonic() + 5
    while client.threads.get_state(tid)["next"] != ["b"]:
        assert time.monotonic() < deadline, "step a never committed"
        time.sleep(0.05)
    client.runs.cancel(tid, run["run_id"], wait=True)
    assert client.runs.get(tid, run["run_id"])["status"] == "interrupted"
    thread = client.threads.get(tid)
    assert thread["status"] == "interrupted" and thread["values"] == {"delay": 30, "steps": ["a"]}
    state = client.threads.get_state(tid)
    assert state["next"] == ["b"] and state["values"]["steps"] == ["a"]
    assert [h["metadata"]["step"] for h in client.threads.get_history(tid)] == [1, 0, -1]
    # the thread continues from where the cancelled run stopped
    client.threads.update_state(tid, {"delay": 0})
    assert client.runs.wait(tid, "two_step", input=None)["steps"] == ["a", "b"]


def test_disconnect_does_not_stop_the_run(server, client) -> None:
    tid = client.threads.create()["thread_id"]
    with httpx.Client(base_url=server.url, timeout=10) as http, http.stream(
        "POST", f"/threads/{tid}/runs/stream", json={"assistant_id": "slow", "input": {"delay": 0.4, "value": "d"}}
    ) as resp:
        first = next(resp.iter_lines())
        assert first == "event: metadata"
    run_id = client.runs.list(tid)[0]["run_id"]
    assert client.runs.join(tid, run_id) == {"delay": 0.4, "value": "dz", "steps": ["nap"]}
    assert client.runs.get(tid, run_id)["status"] == "success"


def test_disconnect_with_on_disconnect_cancel(server, client) -> None:
    tid = client.threads.create()["thread_id"]
    body = {"assistant_id": "slow", "input": {"delay": 30}, "on_disconnect": "cancel"}
    with httpx.Client(base_url=server.url, timeout=10) as http, http.stream(
            "POST", f"/threads/{tid}/runs/stream", json=body) as resp:
        next(resp.iter_lines())
    run_id = client.runs.list(tid)[0]["run_id"]
    assert _wait_status(client, tid, run_id, {"interrupted", "success", "error"}) == "interrupted"


def test_multitask_enqueue_and_reject(client) -> None:
    tid = client.threads.create()["thread_id"]
    first = client.runs.create(tid, "slow", input={"delay": 0.4, "value": "1"})
    second = client.runs.create(tid, "slow", input={"delay": 0.1, "value": "2"})
    assert second["status"] == "pending" and second["multitask_strategy"] == "enqueue"
    with pytest.raises(Exception) as info:
        client.runs.create(tid, "slow", input={"delay": 0.1}, multitask_strategy="reject")
    assert info.value.response.status_code == 409
    assert client.runs.join(tid, second["run_id"])["steps"] == ["nap", "nap"]
    assert client.runs.get(tid, first["run_id"])["status"] == "success"
    assert [r["run_id"] for r in client.runs.list(tid)] == [second["run_id"], first["run_id"]]


def test_multitask_interrupt(client) -> None:
    tid = client.threads.create()["thread_id"]
    first = client.runs.create(tid, "slow", input={"delay": 30})
    _wait_status(client, tid, first["run_id"], {"running"})
    out = client.runs.wait(tid, "slow", input={"delay": 0, "value": "i"}, multitask_strategy="interrupt")
    assert out["value"] == "iz"
    assert client.runs.get(tid, first["run_id"])["status"] == "interrupted"


def test_multitask_rollback_deletes_the_run_and_its_checkpoints(client) -> None:
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "two_step", input={"delay": 0})
    before = client.threads.get_history(tid)
    doomed = client.runs.create(tid, "two_step", input={"delay": 30})
    _wait_status(client, tid, doomed["run_id"], {"running"})
    time.sleep(0.2)
    out = client.runs.wait(tid, "two_step", input={"delay": 0}, multitask_strategy="rollback")
    assert out["steps"] == ["a", "b", "a", "b"]
    with pytest.raises(Exception) as info:
        client.runs.get(tid, doomed["run_id"])
    assert info.value.response.status_code == 404
    history = client.threads.get_history(tid, limit=50)
    assert not [h for h in history if h["metadata"].get("run_id") == doomed["run_id"]]
    assert history[-len(before):] == before


def test_cancel_pending_run_and_unknown(client) -> None:
    tid = client.threads.create()["thread_id"]
    running = client.runs.create(tid, "slow", input={"delay": 30})
    queued = client.runs.create(tid, "slow", input={"delay": 0})
    client.runs.cancel(tid, queued["run_id"], wait=True)
    assert client.runs.get(tid, queued["run_id"])["status"] == "interrupted"
    client.runs.cancel(tid, running["run_id"], wait=True)
    with pytest.raises(Exception) as info:
        client.runs.cancel(tid, running["run_id"])
    assert info.value.response.status_code == 404


def test_resumable_stream_replay(http, client) -> None:
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(tid, "simple", input={"value": "x"}, stream_mode=["values", "updates"],
                             stream_resumable=True)
    client.runs.join(tid, run["run_id"])
    url = f"/threads/{tid}/runs/{run['run_id']}/stream"
    events = _sse_events(http.get(url, headers={"Last-Event-ID": "0"}).text)
    assert [e for e, _, _ in events] == ["metadata", "values", "updates", "values", "updates", "values"]
    ids = [i for _, _, i in events]
    keys = [tuple(map(int, i.split("-"))) for i in ids]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    rest = _sse_events(http.get(url, headers={"Last-Event-ID": ids[1]}).text)
    assert [i for _, _, i in rest] == ids[2:]
    # a finished run that was not resumable: empty stream
    plain = client.runs.create(tid, "simple", input={"value": "y"})
    client.runs.join(tid, plain["run_id"])
    resp = http.get(f"/threads/{tid}/runs/{plain['run_id']}/stream")
    assert resp.status_code == 200 and resp.text == ""


def test_sse_framing_and_heartbeat(http) -> None:
    resp = http.post("/runs/stream", json={"assistant_id": "slow", "input": {"delay": 0.8}, "stream_mode": "updates"})
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["location"].startswith("/runs/") and resp.headers["location"].endswith("/stream")
    assert resp.text.startswith("event: metadata\r\ndata: {")
    assert ": heartbeat\r\n\r\n" in resp.text
    assert resp.text.rstrip().endswith('data: {"nap":{"value":"z","steps":["nap"]}}')
    waited = http.post("/runs/wait", json={"assistant_id": "slow", "input": {"delay": 0.8}})
    assert waited.text.startswith("\n") and waited.json()["steps"] == ["nap"]
    assert "/join" in waited.headers["location"]


def test_thread_stream_follows_runs(server, client) -> None:
    tid = client.threads.create()["thread_id"]
    names: list[str] = []

    def follow() -> None:
        deadline = time.monotonic() + 10
        with httpx.Client(base_url=server.url, timeout=10) as http, http.stream(
                "GET", f"/threads/{tid}/stream") as resp:
            for line in resp.iter_lines():
                if time.monotonic() > deadline:
                    return
                if line.startswith("event: "):
                    names.append(line[7:])
                if names.count("values") >= 3:
                    return

    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(follow)
        time.sleep(0.3)
        client.runs.wait(tid, "simple", input={"value": "x"})
        fut.result(timeout=10)
    assert names[0] == "metadata" and names.count("values") == 3
