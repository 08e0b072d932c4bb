"""Creating runs: ``/runs/stream``, ``/runs/wait``, ``/runs`` (background), stateful and stateless."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import request_auth
from stepgraph.server.errors import json_response
from stepgraph.server.resources.runs import public
from stepgraph.server.routes._common import ctx_of
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.sse import run_sse, wait_response
from stepgraph.server.validation import read_body

__all__ = ["ROUTES"]


def _paths(job: RunJob, stateless: bool) -> tuple[str, str]:
    if stateless:
        return f"/runs/{job.run_id}", f"/runs/{job.run_id}"
    base = f"/threads/{job.thread_id}/runs/{job.run_id}"
    return base, base


def _disconnect(request: Request, job: RunJob) -> Any:
    if job.run["kwargs"].get("on_disconnect") != "cancel":
        return None
    ctx = ctx_of(request)
    return lambda: ctx.queue.cancel(job, "interrupt")


async def _stream(request: Request, thread_id: str | None) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, await read_body(request), auth=request_auth(request))
    base, content = _paths(job, thread_id is None)
    headers = {"Location": f"{base}/stream", "Content-Location": content}
    return run_sse(job.log, headers=headers, with_ids=job.log.resumable, heartbeat=ctx.settings.heartbeat,
                   on_disconnect=_disconnect(request, job))


async def _wait(request: Request, thread_id: str | None) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, await read_body(request), auth=request_auth(request))
    base = f"/threads/{job.thread_id}/runs/{job.run_id}"
    headers = {"Location": f"{base}/join", "Content-Location": base}
    return wait_response(ctx.service.outcome(job.run), headers=headers, heartbeat=ctx.settings.heartbeat,
                         on_disconnect=_disconnect(request, job))


async def _background(request: Request, thread_id: str | None) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, await read_body(request), auth=request_auth(request))
    _, content = _paths(job, thread_id is None)
    return json_response(public(job.run), headers={"Content-Location": content})


async def stream_stateful(request: Request) -> Response:
    """Create a run on a thread and stream its events (SSE)."""
    return await _stream(request, request.path_params["thread_id"])


async def stream_stateless(request: Request) -> Response:
    """Create a run on a temporary thread and stream its events (SSE)."""
    return await _stream(request, None)


async def wait_stateful(request: Request) -> Response:
    """Create a run on a thread and answer its final values."""
    return await _wait(request, request.path_params["thread_id"])


async def wait_stateless(request: Request) -> Response:
    """Create a run on a temporary thread and answer its final values."""
    return await _wait(request, None)


async def create_stateful(request: Request) -> Response:
    """Create a background run on a thread."""
    return await _background(request, request.path_params["thread_id"])


async def create_stateless(request: Request) -> Response:
    """Create a background run on a temporary thread."""
    return await _background(request, None)


async def create_batch(request: Request) -> Response:
    """Create several stateless background runs."""
    ctx = ctx_of(request)
    bodies = await read_body(request, kind=list)
    auth = request_auth(request)
    jobs = [await ctx.service.create(None, body if isinstance(body, dict) else {}, auth=auth) for body in bodies]
    return json_response([public(j.run) for j in jobs])


ROUTES = [
    Route("/threads/{thread_id}/runs/stream", stream_stateful, methods=["POST"]),
    Route("/threads/{thread_id}/runs/wait", wait_stateful, methods=["POST"]),
    Route("/threads/{thread_id}/runs", create_stateful, methods=["POST"]),
    Route("/runs/stream", stream_stateless, methods=["POST"]),
    Route("/runs/wait", wait_stateless, methods=["POST"]),
    Route("/runs/batch", create_batch, methods=["POST"]),
    Route("/runs", create_stateless, methods=["POST"]),
]
