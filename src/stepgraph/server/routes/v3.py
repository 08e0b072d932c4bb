"""The v3 thread-streaming protocol: ``/threads/{id}/commands`` and ``/threads/{id}/stream/events``.

See ``docs/protocol/v3-thread-streaming.md``. Commands are JSON request/response
(``runtime.commands``); an event stream is an SSE connection that replays the thread's
event log (``runtime.threadlog``) and then follows it live, with a ``: heartbeat`` comment
after every ``heartbeat`` seconds of silence, until the client closes it. A stream may be
opened before the thread exists: it starts delivering once a run starts on that id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from stepgraph.server.auth import authorize, request_auth
from stepgraph.server.codes import INVALID_JSON
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of
from stepgraph.server.runtime.commands import failure, run_command
from stepgraph.server.runtime.threadlog import EventFilter, FilterError
from stepgraph.server.schemas.meta import EventStreamRequest, ProtocolCommand, ProtocolEnvelope
from stepgraph.server.validation import read_json

__all__ = ["ROUTES"]

HEARTBEAT = b": heartbeat\r\n\r\n"
SSE_HEADERS = {"cache-control": "no-store", "x-accel-buffering": "no"}


async def _json_body(request: Request) -> object:
    """The body (``None`` when empty); ``ValueError`` when it is not JSON within the limits
    (its text is the protocol's ``Invalid JSON body``, or the limit it passed)."""
    try:
        return await read_json(request)
    except ApiError as exc:
        raise ValueError("Invalid JSON body" if exc.detail.startswith(f"[{INVALID_JSON}]") else exc.detail) from None


@operation(body_doc=ProtocolCommand, ok=ProtocolEnvelope, error_models=((400, ProtocolEnvelope),))
async def commands(request: Request) -> Response:
    """Run one protocol command; answers its envelope (HTTP 400 when it is not a command)."""
    try:
        body = await _json_body(request)
    except ValueError as exc:
        return json_response({"detail": str(exc)}, 400)
    cid = body.get("id") if isinstance(body, dict) else None
    method = body.get("method") if isinstance(body, dict) else None
    if isinstance(cid, bool) or not isinstance(cid, int) or not isinstance(method, str):
        return json_response(failure(None, "invalid_argument",
                                     "Protocol commands must include an integer id and string method."), 400)
    envelope = await run_command(ctx_of(request), request.path_params["thread_id"], body,
                                 auth=request_auth(request))
    return json_response(envelope)


@operation(body_doc=EventStreamRequest, media="text/event-stream", errors=(410,))
async def stream_events(request: Request) -> Response:
    """Follow the thread's event log (SSE), filtered by ``channels``/``namespaces``/``depth``,
    replaying the events after ``since`` first."""
    ctx = ctx_of(request)
    try:
        body = await _json_body(request)
    except ValueError as exc:
        return json_response({"detail": str(exc)}, 400)
    if not isinstance(body, dict):
        body = {}
    try:
        flt = EventFilter.parse(body)
    except FilterError as exc:
        return json_response({"detail": str(exc)}, 400)
    since = body.get("since")
    if since is not None and (isinstance(since, bool) or not isinstance(since, int) or since < 0):
        return json_response({"detail": "since must be a non-negative integer"}, 400)
    thread_id = request.path_params["thread_id"]
    access = await authorize(request, "threads", "read", {"thread_id": thread_id})
    if access is not None and await ctx.threads.find(thread_id, access) is None:
        return json_response({"detail": "Thread not found"}, 404)
    log = ctx.thread_logs.open(thread_id)
    if log.missed(since):  # replaying would skip dropped events: say so (4xx is final for the SDK)
        return json_response({"detail": f"Events up to seq {log.dropped_through} of this thread were dropped from "
                                        f"the server's buffer; read GET /threads/{thread_id}/state and stream "
                                        f"again without since or with since >= {log.dropped_through}."}, 410)
    heartbeat = ctx.settings.heartbeat

    async def frames() -> AsyncIterator[bytes]:
        async for event in log.follow(flt, since=since, heartbeat=heartbeat):
            yield HEARTBEAT if event is None else event.frame

    return StreamingResponse(frames(), media_type="text/event-stream", headers=SSE_HEADERS)


ROUTES = [
    Route("/threads/{thread_id}/commands", commands, methods=["POST"]),
    Route("/threads/{thread_id}/stream/events", stream_events, methods=["POST"]),
]
