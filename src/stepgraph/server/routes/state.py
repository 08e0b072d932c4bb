"""Thread state: get (latest, at a checkpoint, by POST), update, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, engine_errors, thread_for
from stepgraph.server.snapshots import EMPTY_STATE, thread_state
from stepgraph.server.validation import (
    opt_bool,
    opt_dict,
    opt_int,
    opt_str,
    query_bool,
    query_int,
    read_body,
)

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["ROUTES", "apply_supersteps"]


def _config(thread_id: str, checkpoint: dict[str, Any] | None = None, checkpoint_id: str | None = None) -> dict[str, Any]:
    checkpoint = checkpoint or {}
    conf: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint.get("checkpoint_ns"):
        conf["checkpoint_ns"] = checkpoint["checkpoint_ns"]
    cid = checkpoint_id or checkpoint.get("checkpoint_id")
    if cid:
        conf["checkpoint_id"] = cid
    if isinstance(checkpoint.get("checkpoint_map"), dict):
        conf["checkpoint_map"] = checkpoint["checkpoint_map"]
    return {"configurable": conf}


async def _state(request: Request, checkpoint: dict[str, Any] | None, subgraphs: bool) -> Response:
    ctx = ctx_of(request)
    thread = await thread_for(request, "read", request.path_params["thread_id"])
    graph = await ctx.thread_graph(thread, required=False)
    if graph is None:
        return json_response(dict(EMPTY_STATE))
    with engine_errors(404):
        snap = await graph.aget_state(_config(thread["thread_id"], checkpoint), subgraphs=subgraphs)
    return json_response(thread_state(snap))


async def get_state(request: Request) -> Response:
    """The latest state of a thread (``?subgraphs=true`` nests pending subgraphs' states)."""
    return await _state(request, None, query_bool(request, "subgraphs"))


async def get_state_at(request: Request) -> Response:
    """The state at one checkpoint."""
    checkpoint = {"checkpoint_id": request.path_params["checkpoint_id"]}
    return await _state(request, checkpoint, query_bool(request, "subgraphs"))


async def post_state_checkpoint(request: Request) -> Response:
    """The state at ``checkpoint`` (only ``thread_id`` in it means the latest)."""
    body = await read_body(request)
    checkpoint = opt_dict(body, "checkpoint")
    if checkpoint is None:
        raise ApiError(422, "Field 'checkpoint' is required and must be an object.")
    return await _state(request, checkpoint, opt_bool(body, "subgraphs"))


async def update_state(request: Request) -> Response:
    """Apply ``values`` as if ``as_node`` had returned them; answers the new checkpoint."""
    ctx = ctx_of(request)
    body = await read_body(request)
    thread_id = request.path_params["thread_id"]
    allowed = await authorize(request, "threads", "update", {"thread_id": thread_id})
    thread = await thread_for(request, "read", thread_id)
    if allowed is not None and await ctx.threads.find(thread_id, allowed) is None:
        raise ApiError(403, "Forbidden")
    if ctx.queue.active(thread["thread_id"]):
        raise ApiError(409, "Thread is busy: wait for its runs to finish before updating its state.")
    graph = await ctx.thread_graph(thread)
    config = _config(thread["thread_id"], opt_dict(body, "checkpoint"), opt_str(body, "checkpoint_id"))
    with engine_errors(400):
        saved = await graph.aupdate_state(config, body.get("values"), as_node=opt_str(body, "as_node"))
    await ctx.refresh_thread(thread["thread_id"], graph=graph)
    conf = saved["configurable"]
    checkpoint = {"thread_id": conf.get("thread_id"), "checkpoint_ns": conf.get("checkpoint_ns", ""),
                  "checkpoint_id": conf.get("checkpoint_id")}
    return json_response({"checkpoint": checkpoint, "configurable": checkpoint,
                          "checkpoint_id": checkpoint["checkpoint_id"]})


async def _history(request: Request, *, limit: int, before: Any, metadata: dict[str, Any] | None,
                   checkpoint: dict[str, Any] | None) -> Response:
    ctx = ctx_of(request)
    thread = await thread_for(request, "read", request.path_params["thread_id"])
    graph = await ctx.thread_graph(thread, required=False)
    if graph is None:
        return json_response([])
    if isinstance(before, str):
        before = {"configurable": {"checkpoint_id": before}}
    elif isinstance(before, dict) and "configurable" not in before:
        before = {"configurable": before}
    config = _config(thread["thread_id"], checkpoint)
    config["configurable"].pop("checkpoint_id", None)
    with engine_errors(404):
        states = [thread_state(s) async for s in graph.aget_state_history(
            config, filter=metadata or None, before=before, limit=limit)]
    return json_response(states)


async def post_history(request: Request) -> Response:
    """Past states, newest first (``limit``, ``before``, ``metadata`` filter, ``checkpoint``)."""
    body = await read_body(request)
    before = body.get("before")
    if before is not None and not isinstance(before, (str, dict)):
        raise ApiError(422, "Invalid 'before': expected a checkpoint id or a checkpoint object.")
    return await _history(request, limit=opt_int(body, "limit", 10, lo=1), before=before,
                          metadata=opt_dict(body, "metadata"), checkpoint=opt_dict(body, "checkpoint"))


async def get_history(request: Request) -> Response:
    """Past states, newest first (``?limit=&before=<checkpoint_id>``)."""
    return await _history(request, limit=query_int(request, "limit", 10, lo=1),
                          before=request.query_params.get("before") or None, metadata=None, checkpoint=None)


async def apply_supersteps(ctx: ServerContext, thread: dict[str, Any], supersteps: Any) -> None:
    """Seed a new thread's state: ``[{"updates": [{"values", "as_node"}...]}...]``."""
    if not isinstance(supersteps, list):
        raise ApiError(422, "Invalid 'supersteps': expected a list.")
    graph = await ctx.thread_graph(thread)
    steps = []
    for step in supersteps:
        updates = step.get("updates") if isinstance(step, dict) else None
        if not isinstance(updates, list) or not updates:
            raise ApiError(422, "Invalid 'supersteps': each step needs a non-empty 'updates' list.")
        steps.append([(u.get("values"), u.get("as_node")) for u in updates if isinstance(u, dict)])
    with engine_errors(400):
        await graph.abulk_update_state({"configurable": {"thread_id": thread["thread_id"]}}, steps)
    await ctx.refresh_thread(thread["thread_id"], graph=graph)


ROUTES = [
    Route("/threads/{thread_id}/state", get_state, methods=["GET"]),
    Route("/threads/{thread_id}/state", update_state, methods=["POST"]),
    Route("/threads/{thread_id}/state/checkpoint", post_state_checkpoint, methods=["POST"]),
    Route("/threads/{thread_id}/state/{checkpoint_id}", get_state_at, methods=["GET"]),
    Route("/threads/{thread_id}/history", post_history, methods=["POST"]),
    Route("/threads/{thread_id}/history", get_history, methods=["GET"]),
]
