"""Thread state: get (latest, at a checkpoint, by POST), update, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, engine_errors, thread_for
from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.schemas.threads import (
    HistoryQuery,
    HistoryRequest,
    StateCheckpointRequest,
    StateQuery,
    StateUpdate,
    StateUpdateResponse,
    ThreadState,
)
from stepgraph.server.snapshots import EMPTY_STATE, thread_state

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext
    from stepgraph.server.schemas.threads import Superstep

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


@operation(query=StateQuery, ok=ThreadState, errors=(404,))
async def get_state(request: Request, query: StateQuery) -> Response:
    """The latest state of a thread (``?subgraphs=true`` nests pending subgraphs' states)."""
    return await _state(request, None, query.subgraphs)


@operation(query=StateQuery, ok=ThreadState, errors=(404,))
async def get_state_at(request: Request, query: StateQuery) -> Response:
    """The state at one checkpoint."""
    checkpoint = {"checkpoint_id": request.path_params["checkpoint_id"]}
    return await _state(request, checkpoint, query.subgraphs)


@operation(body=StateCheckpointRequest, ok=ThreadState, errors=(404,))
async def post_state_checkpoint(request: Request, body: StateCheckpointRequest) -> Response:
    """The state at ``checkpoint`` (only ``thread_id`` in it means the latest)."""
    return await _state(request, as_dict(body.checkpoint), bool(body.subgraphs))


@operation(body=StateUpdate, ok=StateUpdateResponse, errors=(400, 404, 409))
async def update_state(request: Request, body: StateUpdate) -> Response:
    """Apply ``values`` as if ``as_node`` had returned them; answers the new checkpoint."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    allowed = await authorize(request, "threads", "update", {"thread_id": thread_id})
    thread = await thread_for(request, "read", thread_id)
    if allowed is not None and await ctx.threads.find(thread_id, allowed) is None:
        raise ApiError(403, "Forbidden")
    if await ctx.service.busy(thread["thread_id"]):
        raise ApiError(409, "Thread is busy: wait for its runs to finish before updating its state.")
    graph = await ctx.thread_graph(thread)
    config = _config(thread["thread_id"], as_dict(body.checkpoint), body.checkpoint_id)
    with engine_errors(400):
        saved = await graph.aupdate_state(config, body.values, as_node=body.as_node)
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


@operation(body=HistoryRequest, ok=list[ThreadState], errors=(404,))
async def post_history(request: Request, body: HistoryRequest) -> Response:
    """Past states, newest first (``limit``, ``before``, ``metadata`` filter, ``checkpoint``)."""
    before = body.before if body.before is None or isinstance(body.before, str) else as_dict(body.before)
    return await _history(request, limit=body.limit or 10, before=before,
                          metadata=body.metadata, checkpoint=as_dict(body.checkpoint))


@operation(query=HistoryQuery, ok=list[ThreadState], errors=(404,))
async def get_history(request: Request, query: HistoryQuery) -> Response:
    """Past states, newest first (``?limit=&before=<checkpoint_id>``)."""
    return await _history(request, limit=query.limit, before=query.before or None, metadata=None,
                          checkpoint=None)


async def apply_supersteps(ctx: ServerContext, thread: dict[str, Any], supersteps: list[Superstep]) -> None:
    """Seed a new thread's state: ``[{"updates": [{"values", "as_node"}...]}...]``."""
    graph = await ctx.thread_graph(thread)
    steps = [[(u.values, u.as_node) for u in step.updates] for step in supersteps]
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
