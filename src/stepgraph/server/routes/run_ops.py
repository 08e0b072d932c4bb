"""Existing runs: get, list, delete, join, join-stream and cancel (also by run id alone)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.resources.runs import ACTIVE, public
from stepgraph.server.routes._common import (
    RUN_LOCATION,
    ctx_of,
    no_content,
    run_for,
    thread_for,
    url_path,
)
from stepgraph.server.runtime.eventlog import parse_event_id
from stepgraph.server.schemas.fields import JsonObject
from stepgraph.server.schemas.runs import (
    CancelManyQuery,
    CancelQuery,
    JoinQuery,
    JoinStreamQuery,
    ListRunsQuery,
    Run,
    RunFields,
    RunsCancel,
    ThreadStreamQuery,
)
from stepgraph.server.sse import run_sse, thread_sse, wait_response

__all__ = ["ROUTES"]


def _thread(request: Request) -> str | None:
    return request.path_params.get("thread_id")


def _modes(stream_mode: list[str]) -> set[str] | None:
    """The ``stream_mode`` query filter (``messages-tuple`` events are named ``messages``)."""
    modes = {("messages" if m == "messages-tuple" else m) for m in stream_mode}
    modes.discard("run_modes")
    return modes or None


_LAST_EVENT_ID = (("Last-Event-ID", "Replay a resumable run's events after this id (0: all of them)."),)


def _cancel_on_disconnect(request: Request, run_id: str, wanted: bool):  # noqa: ANN202 - optional callback
    if not wanted:
        return None
    ctx = ctx_of(request)

    def cancel() -> None:
        ctx.service.cancel_detached(run_id, "interrupt")

    return cancel


@operation(ok=Run, errors=(404,))
async def get_run(request: Request) -> Response:
    """A run."""
    run = await run_for(request, "read", _thread(request), request.path_params["run_id"])
    return json_response(public(run))


@operation(query=ListRunsQuery, ok=list[RunFields], errors=(404,))
async def list_runs(request: Request, query: ListRunsQuery) -> Response:
    """A thread's runs, newest first (``limit``, ``offset``, ``status``, ``select``)."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await thread_for(request, "read", thread_id)
    listed = await authorize(request, "threads", "search", {"thread_id": thread_id, "metadata": {}})
    if listed is not None and await ctx.threads.find(thread_id, listed) is None:
        return json_response([])
    runs = await ctx.runs.list(thread_id, limit=query.limit, offset=query.offset, status=query.status)
    select = query.select
    out = [public(r) for r in runs]
    if select:
        out = [{k: r.get(k) for k in select} for r in out]
    return json_response(out)


@operation(status=204, errors=(404, 409))
async def delete_run(request: Request) -> Response:
    """Delete a finished run (409 while it is pending or running)."""
    ctx = ctx_of(request)
    run = await run_for(request, "delete", _thread(request), request.path_params["run_id"])
    if run.get("status") in ACTIVE:
        raise ApiError(409, "Cannot delete a pending or running run; cancel it first.")
    await ctx.runs.delete(run["run_id"])
    return no_content()


@operation(query=JoinQuery, ok=Any, errors=(404,), response_headers=RUN_LOCATION)
async def join_run(request: Request, query: JoinQuery) -> Response:
    """Wait for a run and answer its final values (like ``wait``)."""
    ctx = ctx_of(request)
    run = await run_for(request, "read", _thread(request), request.path_params["run_id"])
    base = url_path("threads", run["thread_id"], "runs", run["run_id"])
    return wait_response(ctx.service.outcome(run), heartbeat=ctx.settings.heartbeat,
                         headers={"Location": f"{base}/join", "Content-Location": base},
                         on_disconnect=_cancel_on_disconnect(request, run["run_id"], query.cancel_on_disconnect))


@operation(query=JoinStreamQuery, media="text/event-stream", errors=(404, 410), headers=_LAST_EVENT_ID,
           response_headers=RUN_LOCATION)
async def join_stream(request: Request, query: JoinStreamQuery) -> Response:
    """Follow a run's events (SSE); ``Last-Event-ID`` replays a resumable run's stored events."""
    ctx = ctx_of(request)
    thread_id = _thread(request)
    run = await run_for(request, "read", thread_id, request.path_params["run_id"])
    modes = _modes(query.stream_mode)
    log, after, live = ctx.service.stream_plan(run, parse_event_id(request.headers.get("last-event-id")))
    base = url_path("threads", run["thread_id"], "runs", run["run_id"]) if thread_id else url_path("runs", run["run_id"])
    return run_sse(log, headers={"Location": f"{base}/stream", "Content-Location": base}, with_ids=True,
                   heartbeat=ctx.settings.heartbeat, after=after, live=live, modes=modes,
                   on_disconnect=_cancel_on_disconnect(request, run["run_id"], query.cancel_on_disconnect))


@operation(query=CancelQuery, ok=JsonObject, empty=(202,), errors=(404,))
async def cancel_run(request: Request, query: CancelQuery) -> Response:
    """Cancel a pending or running run (``wait``, ``action=interrupt|rollback``); 202 unless ``wait``."""
    ctx = ctx_of(request)
    run_id = request.path_params["run_id"]
    run = await run_for(request, "update", _thread(request), run_id, action=query.action,
                        metadata={"run_ids": [run_id], "status": None})
    await ctx.service.cancel(run["thread_id"], run_id, action=query.action, wait=query.wait)
    return json_response({}) if query.wait else no_content(202)


@operation(body=RunsCancel, query=CancelManyQuery, status=204)
async def cancel_many(request: Request, body: RunsCancel, query: CancelManyQuery) -> Response:
    """Cancel runs by thread and ids, or every run with a status (``pending``/``running``/``all``)."""
    ctx = ctx_of(request)
    thread_id, run_ids, status = body.thread_id, body.run_ids, body.status
    if status is None and not (thread_id and run_ids):
        raise ApiError(422, "Provide either 'status', or 'thread_id' with 'run_ids'.")
    access = await authorize(request, "threads", "update", {
        "thread_id": thread_id, "action": query.action, "metadata": {"run_ids": run_ids, "status": status}})
    await ctx.service.cancel_many(thread_id=thread_id, run_ids=run_ids, status=status, action=query.action,
                                  access=access)
    return no_content()


@operation(query=ThreadStreamQuery, media="text/event-stream", errors=(404,))
async def thread_stream(request: Request, query: ThreadStreamQuery) -> Response:
    """Follow every run of a thread (SSE) until the client disconnects."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await thread_for(request, "read", thread_id)
    heartbeat = ctx.settings.heartbeat
    return thread_sse(ctx.service.thread_runs(thread_id, heartbeat), headers={}, heartbeat=heartbeat,
                      modes=_modes(query.stream_mode))


ROUTES = [
    Route("/threads/{thread_id}/stream", thread_stream, methods=["GET"]),
    Route("/threads/{thread_id}/runs", list_runs, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}", get_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}", delete_run, methods=["DELETE"]),
    Route("/threads/{thread_id}/runs/{run_id}/join", join_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/stream", join_stream, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
    Route("/runs/cancel", cancel_many, methods=["POST"]),
    Route("/runs/{run_id}", get_run, methods=["GET"]),
    Route("/runs/{run_id}", delete_run, methods=["DELETE"]),
    Route("/runs/{run_id}/join", join_run, methods=["GET"]),
    Route("/runs/{run_id}/stream", join_stream, methods=["GET"]),
    Route("/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
]
