"""Creating runs: ``/runs/stream``, ``/runs/wait``, ``/runs`` (background), stateful and stateless."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import request_auth
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import json_response
from stepgraph.server.resources.runs import public
from stepgraph.server.routes._common import RUN_LOCATION, configurable_headers, ctx_of, url_path
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.schemas.runs import Run, RunCreate
from stepgraph.server.sse import run_sse, wait_response

__all__ = ["ROUTES"]


def _paths(job: RunJob, stateless: bool) -> tuple[str, str]:
    if stateless:
        return url_path("runs", job.run_id), url_path("runs", job.run_id)
    base = url_path("threads", job.thread_id, "runs", job.run_id)
    return base, base


def _disconnect(request: Request, job: RunJob) -> Any:
    if job.run["kwargs"].get("on_disconnect") != "cancel":
        return None
    ctx = ctx_of(request)
    return lambda: ctx.queue.cancel(job, "interrupt")


async def _stream(request: Request, thread_id: str | None, body: RunCreate) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, body, auth=request_auth(request),
                                   headers=configurable_headers(request))
    base, content = _paths(job, thread_id is None)
    headers = {"Location": f"{base}/stream", "Content-Location": content}
    return run_sse(job.log, headers=headers, with_ids=job.log.resumable, heartbeat=ctx.settings.heartbeat,
                   on_disconnect=_disconnect(request, job))


async def _wait(request: Request, thread_id: str | None, body: RunCreate) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, body, auth=request_auth(request),
                                   headers=configurable_headers(request))
    base = url_path("threads", job.thread_id, "runs", job.run_id)
    headers = {"Location": f"{base}/join", "Content-Location": base}
    return wait_response(ctx.service.outcome(job.run), headers=headers, heartbeat=ctx.settings.heartbeat,
                         on_disconnect=_disconnect(request, job))


async def _background(request: Request, thread_id: str | None, body: RunCreate) -> Response:
    ctx = ctx_of(request)
    job = await ctx.service.create(thread_id, body, auth=request_auth(request),
                                   headers=configurable_headers(request))
    _, content = _paths(job, thread_id is None)
    return json_response(public(job.run), headers={"Content-Location": content})


_STREAM = {"body": RunCreate, "media": "text/event-stream", "errors": (400, 404, 409),
           "response_headers": RUN_LOCATION}
_WAIT = {"body": RunCreate, "ok": Any, "errors": (400, 404, 409), "response_headers": RUN_LOCATION}
_CREATE = {"body": RunCreate, "ok": Run, "errors": (400, 404, 409),
           "response_headers": RUN_LOCATION[1:]}


@operation(**_STREAM)
async def stream_stateful(request: Request, body: RunCreate) -> Response:
    """Create a run on a thread and stream its events (SSE)."""
    return await _stream(request, request.path_params["thread_id"], body)


@operation(**_STREAM)
async def stream_stateless(request: Request, body: RunCreate) -> Response:
    """Create a run on a temporary thread and stream its events (SSE)."""
    return await _stream(request, None, body)


@operation(**_WAIT)
async def wait_stateful(request: Request, body: RunCreate) -> Response:
    """Create a run on a thread and answer its final values."""
    return await _wait(request, request.path_params["thread_id"], body)


@operation(**_WAIT)
async def wait_stateless(request: Request, body: RunCreate) -> Response:
    """Create a run on a temporary thread and answer its final values."""
    return await _wait(request, None, body)


@operation(**_CREATE)
async def create_stateful(request: Request, body: RunCreate) -> Response:
    """Create a background run on a thread."""
    return await _background(request, request.path_params["thread_id"], body)


@operation(**_CREATE)
async def create_stateless(request: Request, body: RunCreate) -> Response:
    """Create a background run on a temporary thread."""
    return await _background(request, None, body)


@operation(body=Annotated[list[RunCreate], Field(max_length=1000)], ok=list[Run], errors=(400, 404, 409))
async def create_batch(request: Request, body: list[RunCreate]) -> Response:
    """Create several stateless background runs."""
    ctx = ctx_of(request)
    auth = request_auth(request)
    headers = configurable_headers(request)
    jobs = [await ctx.service.create(None, item, auth=auth, headers=headers) for item in body]
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
