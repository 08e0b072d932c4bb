"""Webhooks: the URL policy (blocked by default for loopback, private and link-local targets;
only loopback URLs are used, and refused ones are never connected to) and delivery to a local
receiver through a real server with loopback enabled by config: the final status of stateless
and thread runs, errors, configured headers, bounded retries."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_harness import RunningServer, start_server

from stepgraph.server.config_webhooks import WebhookSettings
from stepgraph.server.runtime.webhooks import WebhookRefused, resolve_webhook, webhook_payload

DEFAULT = WebhookSettings()
LOOPBACK = WebhookSettings(allow_loopback=True)


# -- the URL policy ---------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "reason"), [
    ("http://127.0.0.1:9/hook", "loopback"),
    ("http://127.8.9.10/hook", "loopback"),
    ("http://[::1]:9/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]:9/hook", "loopback"),
    ("http://localhost:9/hook", "loopback"),
    ("http://app.localhost/hook", "loopback"),
    ("http://10.1.2.3/hook", "private"),
    ("http://192.168.0.1/hook", "private"),
    ("http://172.16.5.4/hook", "private"),
    ("http://100.64.0.1/hook", "private"),
    ("http://[fd00::1]/hook", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://metadata.google.internal/x", "metadata"),
    ("http://0.0.0.0:9/hook", "unspecified"),
    ("http://224.0.0.1/hook", "multicast"),
    ("ftp://127.0.0.1/hook", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("javascript:alert(1)", "only http and https"),
    ("/threads", "relative"),
    ("http://user:pw@127.0.0.1/hook", "credentials"),
    ("http://127.0.0.1:99999/hook", "not a valid URL"),
    ("http://127.0.0.1/a b", "spaces"),
    ("http:///nohost", "no host"),
    ("http://127.0.0.1/" + "a" * 3000, "longer than"),
])
async def test_refused_by_default(url: str, reason: str) -> None:
    with pytest.raises(WebhookRefused, match=reason):
        await resolve_webhook(DEFAULT, url)


async def test_loopback_allowed_by_config() -> None:
    target = await resolve_webhook(LOOPBACK, "http://127.0.0.1:8123/hook?a=1")
    assert target.url == "http://127.0.0.1:8123/hook?a=1" and target.host_header == "127.0.0.1:8123"
    named = await resolve_webhook(LOOPBACK, "http://localhost:8123/x")
    assert named.host_header == "localhost:8123" and named.url.startswith(("http://127.", "http://[::1]"))
    v6 = await resolve_webhook(LOOPBACK, "https://[::1]/x")
    assert v6.url == "https://[::1]:443/x" and v6.server_name == "::1" and v6.host_header == "[::1]"
    with pytest.raises(WebhookRefused, match="loopback"):
        await resolve_webhook(DEFAULT, "http://b\u00fccher.localhost/x")  # IDNA-encoded, still a loopback name
    with pytest.raises(WebhookRefused, match="private"):
        await resolve_webhook(LOOPBACK, "http://10.0.0.1/hook")
    with pytest.raises(WebhookRefused, match="link-local"):
        await resolve_webhook(dataclasses.replace(LOOPBACK, allow_private=True), "http://169.254.169.254/")
    private = await resolve_webhook(WebhookSettings(allow_private=True), "http://10.0.0.1/hook")
    assert private.url == "http://10.0.0.1:80/hook"


async def test_policy_keys() -> None:
    https = dataclasses.replace(LOOPBACK, require_https=True)
    with pytest.raises(WebhookRefused, match="require_https"):
        await resolve_webhook(https, "http://127.0.0.1/hook")
    assert (await resolve_webhook(https, "https://127.0.0.1/hook")).server_name == "127.0.0.1"
    ports = dataclasses.replace(LOOPBACK, allowed_ports=(8443,))
    with pytest.raises(WebhookRefused, match="port 443"):
        await resolve_webhook(ports, "https://127.0.0.1/hook")
    assert await resolve_webhook(ports, "http://127.0.0.1:8443/hook")
    domains = dataclasses.replace(LOOPBACK, allowed_domains=("localhost", "*.corp.example"))
    with pytest.raises(WebhookRefused, match="allowed_domains"):
        await resolve_webhook(domains, "http://127.0.0.1/hook")
    with pytest.raises(WebhookRefused, match="allowed_domains"):
        await resolve_webhook(domains, "http://corp.example/hook")  # the apex is not a subdomain
    assert await resolve_webhook(domains, "http://localhost/hook")
    short = dataclasses.replace(LOOPBACK, max_url_length=30)
    with pytest.raises(WebhookRefused, match="longer than 30"):
        await resolve_webhook(short, "http://127.0.0.1/" + "x" * 30)


def test_payload_filter() -> None:
    job = type("J", (), {"status": "success", "result": {"x": 1}})()
    run = {"run_id": "r", "thread_id": "t", "assistant_id": "a", "kwargs": {}, "metadata": {}}
    full = webhook_payload(run, job, None, None)
    assert full["status"] == "success" and full["values"] == {"x": 1} and "webhook_sent_at" in full
    assert webhook_payload(run, job, None, frozenset({"run_id", "status"})) == {"run_id": "r", "status": "success"}
    failed = type("J", (), {"status": "error", "result": {"__error__": {"error": "E", "message": "m"}}})()
    out = webhook_payload(run, failed, {"x": 0}, None)
    assert out["error"] == {"error": "E", "message": "m"} and out["values"] == {"x": 0}


# -- delivery through a server ------------------------------------------------------------------
class Receiver:
    """A local HTTP server that records webhook deliveries and answers scripted statuses."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.cond:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers),
                                              "body": json.loads(body or b"null"), "status": status})
                    receiver.cond.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, n: int, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                assert left > 0, f"expected {n} webhook request(s), got {len(self.requests)}"
                self.cond.wait(left)
            return list(self.requests)

    def reset(self, statuses: list[int] | None = None) -> None:
        with self.cond:
            self.requests.clear()
            self.statuses[:] = statuses or []

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture(scope="module")
def hook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server whose webhooks may target loopback (small back-off so retries are quick)."""
    policy = WebhookSettings(allow_loopback=True, headers={"X-Hook-Token": "t0k"}, backoff=0.05, timeout=10)
    srv = start_server(tmp_path_factory.mktemp("hooks") / "db.sqlite", webhooks=policy)
    yield srv
    srv.stop()


def _post(srv: RunningServer, path: str, body: dict[str, Any]) -> httpx.Response:
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        return http.post(path, json=body)


def test_default_server_refuses_loopback_webhooks(server: RunningServer, receiver: Receiver) -> None:
    receiver.reset()
    for url in (f"{receiver.url}/hook", receiver.url.replace("127.0.0.1", "localhost"), "ftp://127.0.0.1/x"):
        resp = _post(server, "/runs/wait", {"assistant_id": "simple", "input": {"value": "x"}, "webhook": url})
        assert resp.status_code == 422, resp.text
        assert "SG530" in resp.json()["detail"]
    assert receiver.requests == []  # refused before any connection


def test_stateless_run_reports_final_status(hook_server: RunningServer, receiver: Receiver) -> None:
    receiver.reset()
    resp = _post(hook_server, "/runs/wait", {"assistant_id": "simple", "input": {"value": "x"},
                                             "webhook": f"{receiver.url}/done?k=1"})
    assert resp.status_code == 200, resp.text
    (req,) = receiver.wait_for(1)
    assert req["path"] == "/done?k=1"
    assert req["headers"]["X-Hook-Token"] == "t0k" and req["headers"]["Content-Type"] == "application/json"
    body = req["body"]
    assert body["status"] == "success" and body["values"] == resp.json()
    assert body["assistant_id"] and body["run_id"] and body["webhook_sent_at"]


def test_thread_run_and_error_status(hook_server: RunningServer, receiver: Receiver) -> None:
    receiver.reset()
    tid = str(uuid.uuid4())
    assert _post(hook_server, "/threads", {"thread_id": tid}).status_code == 200
    resp = _post(hook_server, f"/threads/{tid}/runs/wait", {"assistant_id": "fail", "input": {},
                                                          "webhook": f"{receiver.url}/fail"})
    assert resp.status_code == 200
    (req,) = receiver.wait_for(1)
    body = req["body"]
    assert body["status"] == "error" and body["thread_id"] == tid
    assert body["error"]["error"] and "message" in body["error"]


def _wait_log(caplog: pytest.LogCaptureFixture, text: str) -> None:
    deadline = time.monotonic() + 30
    while text not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        time.sleep(0.05)


def test_retries_are_bounded(hook_server: RunningServer, receiver: Receiver,
                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stepgraph.server")
    receiver.reset([500, 503])
    _post(hook_server, "/runs/wait", {"assistant_id": "simple", "input": {"value": "r"},
                                      "webhook": f"{receiver.url}/retry"})
    reqs = receiver.wait_for(3)
    assert [r["status"] for r in reqs] == [500, 503, 200]
    receiver.reset([500, 500, 500, 500, 500])
    _post(hook_server, "/runs/wait", {"assistant_id": "simple", "input": {"value": "r"},
                                      "webhook": f"{receiver.url}/down"})
    _wait_log(caplog, "/down for run")  # the "not delivered" line comes after the last attempt
    assert len(receiver.requests) == 3
    receiver.reset([400])
    _post(hook_server, "/runs/wait", {"assistant_id": "simple", "input": {"value": "r"},
                                      "webhook": f"{receiver.url}/bad"})
    _wait_log(caplog, "/bad for run")
    assert len(receiver.requests) == 1  # a 4xx is not retried


def test_disable_webhooks(tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    receiver.reset()
    srv = start_server(tmp_path / "db.sqlite", webhooks=WebhookSettings(disabled=True, allow_loopback=True))
    try:
        caplog.set_level(logging.INFO, logger="stepgraph.server")
        resp = _post(srv, "/runs/wait", {"assistant_id": "simple", "input": {"value": "x"},
                                         "webhook": f"{receiver.url}/x"})
        assert resp.status_code == 200
        _wait_log(caplog, "disable_webhooks")
    finally:
        srv.stop()
    assert receiver.requests == []
