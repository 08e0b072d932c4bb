"""Issue 6 on the server: the v3 thread-streaming protocol, CORS, and the classic-API details
the JavaScript clients rely on (``docs/protocol/v3-thread-streaming.md``).

Over HTTP against the shared test server (heartbeats every 0.3 s); the pure parts (event
filters, thread logs, content blocks, ``events`` mode) are also checked directly.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from stepgraph.server.runtime.blocks import MessageBlocks
from stepgraph.server.runtime.lcevents import CallbackEvents
from stepgraph.server.runtime.protocol import compact_values
from stepgraph.server.runtime.threadlog import EventFilter, FilterError, ThreadLog, ThreadLogs

ORIGIN = "http://localhost:5173"
Frames = list[dict[str, Any]]


# -- helpers ----------------------------------------------------------------------------------
def _parse(block: str) -> dict[str, Any]:
    frame: dict[str, Any] = {}
    for line in block.split("\r\n"):
        if line.startswith(":"):
            frame["comment"] = line[1:].strip()
        elif ": " in line:
            key, value = line.split(": ", 1)
            frame[key] = json.loads(value) if key == "data" else value
    return frame


def events(http: Any, tid: str, body: dict[str, Any], until: Callable[[Frames], bool],
           timeout: float = 15.0) -> tuple[Any, Frames]:
    """Read ``/threads/{tid}/stream/events`` until ``until(frames)``; the stream never ends."""
    frames: Frames = []
    deadline = time.monotonic() + timeout
    with http.stream("POST", f"/threads/{tid}/stream/events", json=body) as resp:
        assert resp.status_code == 200, resp.read()
        buf = ""
        for text in resp.iter_text():
            buf += text
            while "\r\n\r\n" in buf:
                block, buf = buf.split("\r\n\r\n", 1)
                frames.append(_parse(block))
            if until(frames):
                return resp, frames
            assert time.monotonic() < deadline, f"timed out; frames: {frames}"
    raise AssertionError(f"the server closed the stream; frames: {frames}")


def terminal(n: int = 1) -> Callable[[Frames], bool]:
    """Until ``n`` root terminal lifecycle events were seen."""
    def done(frames: Frames) -> bool:
        return sum(1 for f in frames if _is_terminal(f)) >= n
    return done


def _is_terminal(frame: dict[str, Any]) -> bool:
    data = frame.get("data")
    return (isinstance(data, dict) and data.get("method") == "lifecycle" and data["params"]["namespace"] == []
            and data["params"]["data"]["event"] in ("completed", "failed", "interrupted"))


def envelopes(frames: Frames, method: str | None = None) -> list[dict[str, Any]]:
    return [f["data"] for f in frames if "data" in f and (method is None or f["data"]["method"] == method)]


def cmd(http: Any, tid: str, cid: int, method: str, params: dict[str, Any] | None = None) -> Any:
    return http.post(f"/threads/{tid}/commands", json={"id": cid, "method": method, "params": params or {}})


def start(http: Any, tid: str, assistant: str, graph_input: Any) -> str:
    resp = cmd(http, tid, 1, "run.start", {"assistant_id": assistant, "input": graph_input})
    body = resp.json()
    assert resp.status_code == 200 and body["type"] == "success", body
    assert body["id"] == 1 and body["meta"] == {"applied_through_seq": 0}
    return body["result"]["run_id"]


def wait_idle(http: Any, tid: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        thread = http.get(f"/threads/{tid}").json()
        if thread["status"] not in ("busy",) and not http.get(f"/threads/{tid}/runs?status=pending").json():
            return thread
        time.sleep(0.05)
    raise AssertionError("thread stayed busy")


# -- CORS -------------------------------------------------------------------------------------
def test_cors_preflight(http) -> None:
    resp = http.options(f"/threads/{uuid.uuid4()}/commands", headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-api-key"})
    assert resp.status_code == 200 and resp.text == "OK"
    h = resp.headers
    assert h["access-control-allow-origin"] == ORIGIN  # a loopback origin, echoed (never "*")
    assert "POST" in h["access-control-allow-methods"] and "DELETE" in h["access-control-allow-methods"]
    assert h["access-control-allow-headers"] == "content-type,x-api-key"
    assert h["access-control-max-age"] == "600"
    assert "access-control-allow-private-network" not in h


def test_cors_headers_on_responses(http) -> None:
    expose = "x-pagination-total, x-pagination-next, content-location"
    resp = http.post("/threads/search", json={"limit": 1}, headers={"Origin": ORIGIN})
    assert resp.headers["access-control-allow-origin"] == ORIGIN
    assert resp.headers["access-control-expose-headers"] == expose
    assert "x-pagination-total" in resp.headers and "Origin" in resp.headers["vary"]
    missing = http.get(f"/threads/{uuid.uuid4()}", headers={"Origin": ORIGIN})
    assert missing.status_code == 404 and missing.headers["access-control-expose-headers"] == expose
    plain = http.post("/threads/search", json={"limit": 1})
    assert "access-control-allow-origin" not in plain.headers
    with http.stream("POST", "/runs/stream", headers={"Origin": ORIGIN},
                     json={"assistant_id": "simple", "input": {"value": "x"}}) as stream:
        assert stream.headers["access-control-allow-origin"] == ORIGIN
        assert stream.headers["content-location"].startswith("/runs/")
        stream.read()


# -- commands ---------------------------------------------------------------------------------
def test_command_errors(http) -> None:
    tid = str(uuid.uuid4())
    bad = http.post(f"/threads/{tid}/commands", content=b"{nope")
    assert bad.status_code == 400 and bad.json() == {"detail": "Invalid JSON body"}
    no_id = http.post(f"/threads/{tid}/commands", json={"method": "run.start"})
    assert no_id.status_code == 400 and no_id.json()["error"] == "invalid_argument" and no_id.json()["id"] is None
    unknown = cmd(http, tid, 4, "state.get").json()
    assert unknown == {"type": "error", "id": 4, "error": "unknown_command",
                       "message": "Unknown protocol command: state.get"}
    assert cmd(http, tid, 5, "run.start", {"input": {}}).json()["error"] == "invalid_argument"
    nope = cmd(http, tid, 6, "run.start", {"assistant_id": "no-such-graph"}).json()
    assert nope["error"] == "unknown_error" and nope["message"].startswith("422: Invalid assistant")
    not_uuid = cmd(http, "not-a-uuid", 7, "run.start", {"assistant_id": "simple"}).json()
    assert not_uuid["message"] == "422: Invalid thread ID"
    assert cmd(http, tid, 8, "input.respond", {"interrupt_id": "x", "response": 1}).json()["error"] == "no_such_run"
    assert cmd(http, tid, 9, "agent.getTree").json()["error"] == "no_such_run"
    sub = cmd(http, tid, 10, "subscription.subscribe", {"channels": ["values"]}).json()
    assert sub["type"] == "success" and sub["result"]["replayed_events"] == 0
    assert http.get(f"/threads/{tid}").status_code == 404  # failed commands create nothing


def test_event_stream_validation_and_heartbeat(http) -> None:
    tid = str(uuid.uuid4())
    assert http.post(f"/threads/{tid}/stream/events", json={}).json() == {
        "detail": "channels is required and must be a non-empty array"}
    bogus = http.post(f"/threads/{tid}/stream/events", json={"channels": ["values", "bogus"]})
    assert bogus.status_code == 400 and "bogus" in bogus.json()["detail"]
    resp, frames = events(http, "not-even-a-uuid", {"channels": ["values"]}, lambda f: len(f) >= 2)
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["cache-control"] == "no-store" and resp.headers["x-accel-buffering"] == "no"
    assert all(f == {"comment": "heartbeat"} for f in frames)


# -- runs through the protocol ----------------------------------------------------------------
def test_run_start_creates_the_thread_and_streams(http) -> None:
    tid = str(uuid.uuid4())
    run_id = start(http, tid, "simple", {"value": "x"})
    _, frames = events(http, tid, {"channels": ["values", "lifecycle"]}, terminal())
    data = envelopes(frames)
    for frame, env in zip([f for f in frames if "data" in f], data, strict=True):
        assert set(env) == {"type", "event_id", "seq", "method", "params"} and env["type"] == "event"
        assert frame["event"] == env["method"] and frame["id"] == str(env["seq"])
        assert set(env["params"]) == {"namespace", "timestamp", "data"}
    seqs = [e["seq"] for e in data]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert data[0]["params"]["data"] == {"event": "running", "graph_name": "simple"}
    assert data[0]["event_id"] == f"synth:{run_id}:lc||running"
    assert [e["params"]["data"] for e in envelopes(frames, "values")] == [
        {"value": "x", "steps": []}, {"value": "xa", "steps": ["a"]}, {"value": "xab", "steps": ["a", "b"]}]
    assert data[-1]["params"]["data"] == {"event": "completed", "graph_name": "simple"}
    thread = wait_idle(http, tid)
    assert thread["metadata"]["graph_id"] == "simple" and thread["metadata"]["assistant_id"]
    # replay after `since`, a channel filter, and seq continuing across runs
    _, tail = events(http, tid, {"channels": ["values", "lifecycle"], "since": seqs[1]}, terminal())
    assert [e["seq"] for e in envelopes(tail)] == seqs[2:]
    assert [e["event_id"] for e in envelopes(tail)] == [e["event_id"] for e in data[2:]]
    start(http, tid, "simple", {"value": "y"})
    _, both = events(http, tid, {"channels": ["lifecycle"]}, terminal(2))
    life = envelopes(both)
    assert all(e["method"] == "lifecycle" for e in life) and life[-1]["seq"] > seqs[-1]


def test_chat_tokens_as_content_blocks(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "chat", {"messages": [{"type": "human", "content": "hi", "id": "h1"}]})
    _, frames = events(http, tid, {"channels": ["messages", "values", "lifecycle"]}, terminal())
    msgs = [e["params"]["data"] for e in envelopes(frames, "messages")]
    kinds = [m["event"] for m in msgs]
    assert kinds[:2] == ["message-start", "content-block-start"] and kinds[-2:] == [
        "content-block-finish", "message-finish"]
    assert "".join(m["delta"]["text"] for m in msgs if m["event"] == "content-block-delta") == "hello from chat"
    assert msgs[-2]["content"] == {"type": "text", "text": "hello from chat"}
    final = envelopes(frames, "values")[-1]["params"]["data"]["messages"]
    assert final[0] == {"type": "human", "content": "hi", "id": "h1"}  # compact form
    assert final[1]["id"] == msgs[0]["id"] and final[1]["type"] == "ai"
    methods = [e["method"] for e in envelopes(frames)]
    assert methods.index("values", methods.index("messages")) > len(methods) - 3  # values after message-finish


def test_interrupt_respond_and_stale_respond(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "interrupt", {"value": "x"})
    _, frames = events(http, tid, {"channels": ["lifecycle", "input", "values"]}, terminal())
    req = envelopes(frames, "input.requested")
    assert len(req) == 1 and req[0]["params"]["data"]["payload"] == {"question": "approve?", "value": "x"}
    iid = req[0]["params"]["data"]["interrupt_id"]
    assert envelopes(frames, "lifecycle")[-1]["params"]["data"]["event"] == "interrupted"
    assert all("__interrupt__" not in e["params"]["data"] for e in envelopes(frames, "values"))
    assert http.get(f"/threads/{tid}/state").json()["interrupts"][0]["id"] == iid
    wrong = cmd(http, tid, 2, "input.respond", {"namespace": [], "interrupt_id": "f" * 32, "response": 1}).json()
    assert wrong["error"] == "no_such_interrupt"
    ok = cmd(http, tid, 3, "input.respond", {"namespace": [], "interrupt_id": iid, "response": "yes"}).json()
    assert ok == {"type": "success", "id": 3, "result": {}, "meta": {"applied_through_seq": 0}}
    again = cmd(http, tid, 4, "input.respond", {"namespace": [], "interrupt_id": iid, "response": "no"}).json()
    assert again["error"] == "no_such_interrupt"  # already claimed by the queued/running resume
    _, frames2 = events(http, tid, {"channels": ["lifecycle", "values"]}, terminal(2))
    assert envelopes(frames2, "values")[-1]["params"]["data"] == {
        "value": "x|yes", "answer": "yes", "steps": ["ask", "after"]}
    wait_idle(http, tid)
    stale = cmd(http, tid, 5, "input.respond", {"namespace": [], "interrupt_id": iid, "response": "no"}).json()
    assert stale == {"type": "error", "id": 5, "error": "no_such_interrupt",
                     "message": f"Unknown or already-consumed interrupt: {iid}"}


def test_run_start_on_an_interrupted_thread_resumes_it(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "interrupt", {"value": "x"})
    events(http, tid, {"channels": ["lifecycle"]}, terminal())
    wait_idle(http, tid)
    start(http, tid, "interrupt", "yes")
    _, frames = events(http, tid, {"channels": ["lifecycle", "values"]}, terminal(2))
    assert envelopes(frames, "values")[-1]["params"]["data"]["value"] == "x|yes"


def test_subgraph_lifecycle_namespaces_and_depth(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "nested", {"value": "x"})
    _, frames = events(http, tid, {"channels": ["lifecycle", "values"]}, terminal())
    life = [(e["params"]["namespace"], e["params"]["data"]) for e in envelopes(frames, "lifecycle")]
    child = [ns for ns, d in life if d["event"] == "started"]
    assert len(child) == 1 and child[0][0].startswith("child:")
    started = next(d for ns, d in life if d["event"] == "started")
    assert started == {"event": "started", "graph_name": "child", "namespace": child[0],
                       "trigger_call_id": child[0][0].split(":", 1)[1]}
    assert (child[0], {"event": "completed", "graph_name": "child"}) in life
    child_values = [e["params"]["data"] for e in envelopes(frames, "values") if e["params"]["namespace"]]
    assert child_values[-1] == {"value": "xp12"}
    _, root = events(http, tid, {"channels": ["lifecycle", "values"], "namespaces": [[]], "depth": 0}, terminal())
    assert all(e["params"]["namespace"] == [] for e in envelopes(root))


def test_nested_interrupt_in_the_child_namespace(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "nested_interrupt", {"value": "x"})
    _, frames = events(http, tid, {"channels": ["lifecycle", "input"]}, terminal())
    req = envelopes(frames, "input.requested")
    assert len(req) == 1 and req[0]["params"]["namespace"][0].startswith("inner:")
    life = [(e["params"]["namespace"], e["params"]["data"]["event"]) for e in envelopes(frames, "lifecycle")]
    assert (req[0]["params"]["namespace"], "interrupted") in life and life[-1] == ([], "interrupted")
    ok = cmd(http, tid, 2, "input.respond", {"namespace": req[0]["params"]["namespace"],
                                             "interrupt_id": req[0]["params"]["data"]["interrupt_id"],
                                             "response": "ok"}).json()
    assert ok["type"] == "success"
    _, done = events(http, tid, {"channels": ["lifecycle", "values"], "namespaces": [[]], "depth": 0}, terminal(2))
    assert envelopes(done, "values")[-1]["params"]["data"] == {"value": "xp[ok]", "steps": ["prep"]}


def test_failed_run_lifecycle(http) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "fail", {"value": "x"})
    _, frames = events(http, tid, {"channels": ["lifecycle"]}, terminal())
    assert envelopes(frames)[-1]["params"]["data"] == {"event": "failed", "graph_name": "fail", "error": "boom: x"}


def test_classic_runs_are_not_in_the_thread_log(http) -> None:
    tid = http.post("/threads", json={}).json()["thread_id"]
    http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "simple", "input": {"value": "x"}})
    _, frames = events(http, tid, {"channels": ["values", "lifecycle"]}, lambda f: len(f) >= 1)
    assert frames == [{"comment": "heartbeat"}]


def test_deleting_a_thread_ends_its_event_streams(http, server) -> None:
    tid = str(uuid.uuid4())
    start(http, tid, "simple", {"value": "x"})
    events(http, tid, {"channels": ["lifecycle"]}, terminal())
    wait_idle(http, tid)
    log = server.ctx.thread_logs.get(tid)
    deadline = time.monotonic() + 5
    while log.followers and time.monotonic() < deadline:  # closed by the client: not followed any more
        time.sleep(0.05)
    assert log.followers == 0 and log.writers == 0
    assert http.delete(f"/threads/{tid}").status_code == 204
    assert server.ctx.thread_logs.get(tid) is None


# -- classic API details the JS clients rely on -----------------------------------------------
def test_resume_with_empty_input_and_command(http) -> None:
    tid = http.post("/threads", json={}).json()["thread_id"]
    http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "interrupt", "input": {"value": "x"}})
    out = http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "interrupt", "input": {},
                                                       "command": {"resume": "yes"}}).json()
    assert out == {"value": "x|yes", "answer": "yes", "steps": ["ask", "after"]}
    stateless = http.post("/runs/wait", json={"assistant_id": "simple", "input": {"value": "x"},
                                              "command": {"resume": 1}})
    assert stateless.status_code == 400 and "thread_id" in stateless.json()["detail"]


def test_events_mode_streams_chat_model_events(http) -> None:
    with http.stream("POST", "/runs/stream", json={
            "assistant_id": "chat", "input": {"messages": [{"role": "user", "content": "hi"}], "tools": []},
            "stream_mode": ["events", "messages-tuple"]}) as resp:
        text = resp.read().decode()
    parts = [_parse(b) for b in text.split("\r\n\r\n") if b.strip()]
    evs = [p["data"] for p in parts if p.get("event") == "events"]
    kinds = [(e["event"], e["name"]) for e in evs]
    assert kinds[0] == ("on_chain_start", "chat") and kinds[-1] == ("on_chain_end", "chat")
    assert ("on_chain_start", "respond") in kinds and ("on_chain_end", "respond") in kinds
    stream = [e for e in evs if e["event"] == "on_chat_model_stream"]
    assert "".join(e["data"]["chunk"]["content"] for e in stream) == "hello from chat"
    assert all(e["metadata"]["langgraph_node"] == "respond" for e in stream)
    end = next(e for e in evs if e["event"] == "on_chat_model_end")
    assert end["data"]["output"]["content"] == "hello from chat" and end["run_id"] == stream[0]["run_id"]
    assert kinds.index(("on_chat_model_end", end["name"])) < kinds.index(("on_chain_end", "respond"))


# -- pure parts -------------------------------------------------------------------------------
def test_event_filter() -> None:
    log = ThreadLog("t")
    root = log.append("values", (), {"a": 1})
    child = log.append("lifecycle", ("c:1",), {"event": "started"})
    grand = log.append("input.requested", ("c:1", "d:2"), {"interrupt_id": "x"})
    named = log.append("custom", (), {"name": "progress", "payload": 1}, name="progress")
    flt = EventFilter.parse({"channels": ["values", "lifecycle", "input"], "namespaces": [[]], "depth": 1})
    assert [flt.matches(e) for e in (root, child, grand, named)] == [True, True, False, False]
    only_child = EventFilter.parse({"channels": ["input"], "namespaces": [["c:1"]]})
    assert only_child.matches(grand) and not only_child.matches(root)
    assert EventFilter.parse({"channels": ["custom:progress"]}).matches(named)
    assert not EventFilter.parse({"channels": ["custom:other"]}).matches(named)
    for body in ({"channels": []}, {"channels": ["nope"]}, {"channels": ["values"], "depth": -1},
                 {"channels": ["values"], "namespaces": "x"}):
        with pytest.raises(FilterError):
            EventFilter.parse(body)
    frame = root.frame.decode()
    assert frame.startswith("event: values\r\ndata: {") and frame.endswith("\r\nid: 1\r\n\r\n")


async def test_thread_log_follow_since_live_and_heartbeat() -> None:
    log = ThreadLog("t", max_events=3)
    for i in range(4):
        log.append("values", (), {"i": i})
    flt = EventFilter.parse({"channels": ["values"]})
    got: list[Any] = []

    async def reader() -> None:
        async for event in log.follow(flt, since=2, heartbeat=0.05):
            got.append(event.seq if event is not None else None)
            if len(got) >= 4:
                return

    task = asyncio.ensure_future(reader())
    await asyncio.sleep(0.08)
    log.append("values", (), {"i": 4})
    await asyncio.wait_for(task, 2)
    assert got[:2] == [3, 4] and None in got and 5 in got
    assert [e.seq for e in log.events] == [3, 4, 5]  # capped at max_events


def test_thread_logs_are_bounded() -> None:
    logs = ThreadLogs(max_threads=2, max_bytes=1000)
    a, b = logs.open("a"), logs.open("b")
    a.writers += 1  # a run writes to `a`: kept
    logs.open("c")
    assert logs.get("a") is a and logs.get("b") is None and logs.get("c") is not None
    for i in range(20):
        a.append("values", (), {"blob": "x" * 100, "i": i})
    assert a.nbytes <= 1000 and a.events[-1].seq == 20 and len(a.events) < 20
    logs.discard("a")
    assert a.closed and logs.get("a") is None
    stale = ThreadLogs(ttl=0.0)
    stale.open("old")
    stale.open("new")
    assert stale.get("old") is None and b.closed is False


def test_message_blocks_text_and_tool_calls() -> None:
    blocks = MessageBlocks()
    meta = {"langgraph_node": "agent"}
    out = blocks.feed((), {"type": "AIMessageChunk", "id": "m", "content": "Hi"}, meta)
    out += blocks.feed((), {"type": "AIMessageChunk", "id": "m", "content": "",
                            "tool_call_chunks": [{"id": "c1", "name": "search", "args": '{"q": ', "index": 0}]}, meta)
    out += blocks.feed((), {"type": "AIMessageChunk", "id": "m", "content": "",
                            "tool_call_chunks": [{"id": None, "name": None, "args": '"x"}', "index": 0}],
                            "usage_metadata": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
                            "chunk_position": "last"}, meta)
    data = [d for _, d in out]
    assert [d["event"] for d in data] == [
        "message-start", "content-block-start", "content-block-delta", "content-block-finish",
        "content-block-start", "content-block-delta", "content-block-delta", "content-block-finish",
        "message-finish"]
    assert data[3]["content"] == {"type": "text", "text": "Hi"}
    assert data[4]["content"] == {"type": "tool_call_chunk", "id": "c1", "name": "search", "args": ""}
    assert data[7] == {"event": "content-block-finish", "index": 1,
                       "content": {"type": "tool_call", "id": "c1", "name": "search", "args": {"q": "x"}}}
    assert data[8]["usage"] == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    # node-returned messages are left to `values`; unfinished messages end on demand
    assert blocks.feed((), {"type": "ai", "id": "n", "content": "x"}, {"ls_integration": "langgraph"}) == []
    blocks.feed(("sub:1",), {"type": "AIMessageChunk", "id": "p", "content": "part"}, meta)
    assert [d["event"] for _, d in blocks.finish(("sub:1",))] == ["content-block-finish", "message-finish"]


def test_compact_values_and_callback_events() -> None:
    values = {"messages": [{"content": "hi", "additional_kwargs": {}, "response_metadata": {}, "type": "human",
                            "name": None, "id": "1"},
                           {"content": "ok", "type": "tool", "id": "2", "tool_call_id": "c", "status": "success",
                            "artifact": None, "name": "t"}], "other": 1}
    assert compact_values(values) == {"messages": [
        {"type": "human", "content": "hi", "id": "1"},
        {"type": "tool", "content": "ok", "id": "2", "tool_call_id": "c", "status": "success", "artifact": None,
         "name": "t"}], "other": 1}
    cb = CallbackEvents("g", "run-1", {"graph_id": "g"})
    out = cb.start({"x": 1})
    out += cb.feed((), "tasks", {"id": "t1", "name": "n", "input": {}, "triggers": ()})
    out += cb.feed((), "messages", ({"type": "AIMessageChunk", "id": "m", "content": "a"}, {"langgraph_node": "n"}))
    out += cb.feed((), "tasks", {"id": "t1", "name": "n", "error": None, "result": {"x": 2}, "interrupts": []})
    out += cb.end({"x": 2})
    assert [(e["event"], e["name"]) for e in out] == [
        ("on_chain_start", "g"), ("on_chain_start", "n"), ("on_chat_model_start", "ChatModel"),
        ("on_chat_model_stream", "ChatModel"), ("on_chat_model_end", "ChatModel"), ("on_chain_stream", "n"),
        ("on_chain_end", "n"), ("on_chain_stream", "g"), ("on_chain_end", "g")]
    assert out[5]["data"] == {"chunk": {"x": 2}} and out[5]["run_id"] == "t1"
    assert out[7]["data"] == {"chunk": {"n": {"x": 2}}} and out[7]["run_id"] == "run-1"
    assert out[3]["data"]["chunk"]["response_metadata"] == {}
    assert out[4]["data"]["output"]["content"] == "a"
