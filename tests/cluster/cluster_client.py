"""Small HTTP helpers of the cluster tests (httpx, sync).

They share one ``httpx.Client`` (thread-safe, keep-alive): a client per call builds an SSL
context each time, about 20 ms of CPU, which on a 2-core machine is CPU taken from the
cluster under test (the benchmark's client used more CPU per run than the API process).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

HTTP = httpx.Client(timeout=60, limits=httpx.Limits(max_connections=100, max_keepalive_connections=50))


def new_thread(url: str) -> str:
    tid = str(uuid.uuid4())
    r = HTTP.post(f"{url}/threads", json={"thread_id": tid}, timeout=30)
    r.raise_for_status()
    return tid


def create(url: str, tid: str, inp: dict[str, Any], **extra: Any) -> httpx.Response:
    return HTTP.post(f"{url}/threads/{tid}/runs", json={"assistant_id": "g", "input": inp, **extra}, timeout=60)


def run_status(url: str, tid: str, rid: str) -> str:
    r = HTTP.get(f"{url}/threads/{tid}/runs/{rid}", timeout=30)
    r.raise_for_status()
    return r.json()["status"]


def wait_status(url: str, tid: str, rid: str, timeout: float = 120,
                done: tuple[str, ...] = ("success", "error", "interrupted", "timeout")) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = run_status(url, tid, rid)
        except httpx.HTTPError:
            status = "?"
        if status in done:
            return status
        assert time.monotonic() < deadline, f"run {rid} still {status}"
        time.sleep(0.2)


def state(url: str, tid: str) -> dict[str, Any]:
    r = HTTP.get(f"{url}/threads/{tid}/state", timeout=30)
    r.raise_for_status()
    return r.json()


def history(url: str, tid: str) -> list[dict[str, Any]]:
    r = HTTP.post(f"{url}/threads/{tid}/history", json={"limit": 1000}, timeout=30)
    r.raise_for_status()
    return r.json()


def sse(url: str, path: str, *, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None,
        stop_after: int | None = None) -> list[tuple[str, str, str | None]]:
    """``(event, data, id)`` of an SSE response (stop after ``stop_after`` events)."""
    out: list[tuple[str, str, str | None]] = []
    with httpx.stream(method, f"{url}{path}", json=body, headers=headers or {}, timeout=120) as r:
        r.raise_for_status()
        for item in sse_events(r.iter_lines()):
            out.append(item)
            if stop_after is not None and len(out) >= stop_after:
                break
    return out


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, str, str | None]]:
    """``(event, data, id)`` of each SSE event in ``lines``, as it completes."""
    event = data = eid = None
    for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line.startswith("id: "):
            eid = line[4:]
        elif line == "" and event is not None:
            yield event, data or "", eid
            event = data = eid = None
