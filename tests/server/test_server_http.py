"""HTTP-level behaviour: error statuses and bodies, meta endpoints, OpenAPI, headers."""

from __future__ import annotations

import uuid

import pytest

MISSING = "00000000-0000-0000-0000-000000000000"


def _detail(resp) -> str:
    body = resp.json()
    assert set(body) == {"detail"}, body
    assert "Traceback" not in body["detail"]
    return body["detail"]


def test_meta(http) -> None:
    assert http.get("/ok").json() == {"ok": True, "services": {}}
    info = http.get("/info").json()
    assert info["flags"]["assistants"] is True and "simple" in info["graphs"]
    spec = http.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert {"/threads/{thread_id}/runs/stream", "/assistants/search", "/store/items"} <= set(spec["paths"])
    assert len(spec["paths"]) >= 40


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", f"/threads/{MISSING}", 404),
    ("GET", f"/threads/{MISSING}/state", 404),
    ("POST", f"/threads/{MISSING}/history", 404),
    ("DELETE", f"/threads/{MISSING}", 404),
    ("GET", f"/threads/{MISSING}/runs", 404),
    ("GET", f"/threads/{MISSING}/runs/{MISSING}", 404),
    ("POST", f"/threads/{MISSING}/runs/{MISSING}/cancel", 404),
    ("GET", f"/assistants/{MISSING}", 404),
    ("GET", "/assistants/simple", 422),
    ("GET", "/assistants/simple/schemas", 422),
    ("GET", "/assistants/no_such_graph/graph", 404),
    ("GET", "/no/such/route", 404),
    ("DELETE", "/ok", 405),
])
def test_error_statuses(http, method: str, path: str, status: int) -> None:
    resp = http.request(method, path)
    assert resp.status_code == status
    _detail(resp)


@pytest.mark.parametrize(("path", "body"), [
    ("/threads", b"{not json"),
    ("/threads", b"[1, 2]"),
    ("/threads", {"metadata": "x"}),
    ("/threads", {"if_exists": "explode"}),
    ("/threads/search", {"limit": -1}),
    ("/threads/search", {"sort_by": "nope"}),
    ("/threads/search", {"status": "weird"}),
    ("/assistants", {}),
    ("/assistants", {"graph_id": "simple", "assistant_id": "not-a-uuid"}),
    ("/assistants/search", {"limit": "ten"}),
    ("/runs/wait", {}),
    ("/runs/wait", {"assistant_id": "no_such_graph"}),
    ("/runs/wait", {"assistant_id": "simple", "stream_mode": "tools"}),
    ("/runs/wait", {"assistant_id": "simple", "stream_mode": [1]}),
    ("/runs/wait", {"assistant_id": "simple", "multitask_strategy": "sometimes"}),
    ("/runs/wait", {"assistant_id": "simple", "config": {"configurable": []}}),
    ("/runs/wait", {"assistant_id": "simple", "config": {"recursion_limit": "x"}}),
    ("/runs/wait", {"assistant_id": "simple", "command": {"jump": 1}}),
    ("/runs/wait", {"assistant_id": "simple", "command": {"goto": [3]}}),
    ("/runs/wait", {"assistant_id": "simple", "interrupt_before": 5}),
    ("/runs/wait", {"assistant_id": "simple", "after_seconds": -1}),
    ("/runs/stream", {"assistant_id": 42}),
    ("/runs/batch", {"assistant_id": "simple"}),
    ("/store/items/search", {"namespace_prefix": "a.b"}),
    ("/store/namespaces", {"max_depth": 0}),
    ("/runs/cancel", {}),
])
def test_invalid_bodies_get_422(http, path: str, body) -> None:
    resp = http.post(path, content=body) if isinstance(body, bytes) else http.post(path, json=body)
    assert resp.status_code == 422, resp.text
    _detail(resp)


def test_store_put_validation(http) -> None:
    for body in ({"namespace": ["a"], "key": "k"}, {"namespace": ["a.b"], "key": "k", "value": {}},
                 {"namespace": [], "key": "k", "value": {}}, {"namespace": ["a"], "value": {}}):
        resp = http.put("/store/items", json=body)
        assert resp.status_code == 422, (body, resp.text)
    assert http.get("/store/items", params={"namespace": "a"}).status_code == 422


def test_run_preconditions(http) -> None:
    tid = str(uuid.uuid4())
    resp = http.post(f"/threads/{tid}/runs/stream", json={"assistant_id": "simple", "input": {}})
    assert resp.status_code == 404 and _detail(resp) == "Thread or assistant not found."
    resp = http.post("/runs/wait", json={"assistant_id": "interrupt", "command": {"resume": "x"}})
    assert resp.status_code == 400 and "thread_id" in _detail(resp)
    resp = http.post("/runs/wait", json={"assistant_id": "simple", "config": {"configurable": {"a": 1}},
                                         "context": {"b": 2}})
    assert resp.status_code == 400
    # tolerated: duplicate modes, goto [], unknown keys, an api key header
    body = {"assistant_id": "simple", "input": {"value": "x"}, "stream_mode": ["values", "values", "updates"],
            "if_not_exists": "create", "strict_resume": False, "langsmith_tracer": None, "whatever": 1}
    resp = http.post(f"/threads/{tid}/runs/stream", json=body, headers={"x-api-key": "k"})
    assert resp.status_code == 200
    assert [line for line in resp.text.split("\r\n") if line.startswith("event:")].count("event: values") == 3


def test_thread_and_state_errors(http) -> None:
    tid = http.post("/threads", json={}).json()["thread_id"]
    assert http.post("/threads", json={"thread_id": tid}).status_code == 409
    assert http.post("/threads", json={"thread_id": tid, "if_exists": "do_nothing"}).status_code == 200
    # no graph has run on the thread yet
    assert http.get(f"/threads/{tid}/state").json()["checkpoint"] is None
    assert http.post(f"/threads/{tid}/history", json={}).json() == []
    resp = http.post(f"/threads/{tid}/state", json={"values": {"value": "x"}})
    assert resp.status_code == 400
    _detail(resp)
    http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "simple", "input": {"value": "x"}})
    resp = http.post(f"/threads/{tid}/state", json={"values": {"value": "x"}, "as_node": "no_such_node"})
    assert resp.status_code == 400
    _detail(resp)
    resp = http.post(f"/threads/{tid}/state", json={"values": {"nope": 1}, "as_node": "a"})
    assert resp.status_code == 400
    resp = http.post(f"/threads/{tid}/state/checkpoint", json={})
    assert resp.status_code == 422


def test_error_event_and_wait_error(client) -> None:
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "fail", input={"value": "x"}, stream_mode=["values", "updates"]))
    assert (parts[-1].event, parts[-1].data) == ("error", {"error": "ValueError", "message": "boom: x"})
    thread = client.threads.get(tid)
    assert thread["status"] == "error" and thread["error"] == {"error": "ValueError", "message": "boom: x"}
    with pytest.raises(Exception, match="ValueError: boom: x"):
        client.runs.wait(None, "fail", input={"value": "x"})
    run = client.runs.list(tid)[0]
    assert run["status"] == "error"
    assert client.runs.join(tid, run["run_id"]) == {"__error__": {"error": "ValueError", "message": "boom: x"}}


def test_search_pagination_headers(http) -> None:
    tag = uuid.uuid4().hex
    for _ in range(3):
        http.post("/threads", json={"metadata": {"tag": tag}})
    resp = http.post("/threads/search", json={"metadata": {"tag": tag}, "limit": 2})
    assert len(resp.json()) == 2
    assert resp.headers["x-pagination-total"] == "3" and resp.headers["x-pagination-next"] == "2"
    assert http.post("/threads/count", json={"metadata": {"tag": tag}}).json() == 3
    page2 = http.post("/threads/search", json={"metadata": {"tag": tag}, "limit": 2, "offset": 2})
    assert len(page2.json()) == 1 and "x-pagination-next" not in page2.headers
