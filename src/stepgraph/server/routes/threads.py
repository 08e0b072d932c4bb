"""Threads: create, get, search, count, patch, delete, copy, prune."""

from __future__ import annotations

import uuid

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize, authorize_model, request_auth
from stepgraph.server.checkpoints import copy_checkpoints, keep_latest_checkpoints
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.resources.common import pagination_headers
from stepgraph.server.resources.threads import new_thread_doc, public
from stepgraph.server.routes._common import PAGINATION, ctx_of, no_content, thread_for
from stepgraph.server.schemas.threads import (
    PruneResponse,
    Thread,
    ThreadCount,
    ThreadCreate,
    ThreadFields,
    ThreadPatch,
    ThreadPrune,
    ThreadSearch,
)

__all__ = ["ROUTES"]


@operation(body=ThreadCreate, ok=Thread, errors=(400, 409))
async def create_thread(request: Request, body: ThreadCreate) -> Response:
    """Create a thread (optionally with a chosen ``thread_id``; ``if_exists``)."""
    ctx = ctx_of(request)
    supersteps = body.supersteps
    if request_auth(request) is not None and not body.thread_id:
        body = body.model_copy(update={"thread_id": str(uuid.uuid4())})  # the handler sees the id, as on LangGraph
    body, access = await authorize_model(request, "threads", "create", body,
                                         ("thread_id", "metadata", "if_exists", "ttl"))
    thread = await ctx.threads.create(body, access)
    if supersteps:
        from stepgraph.server.routes.state import apply_supersteps

        await apply_supersteps(ctx, thread, supersteps)
        thread = public(await ctx.threads.get(thread["thread_id"]))
    return json_response(thread)


@operation(body=ThreadSearch, ok=list[ThreadFields], response_headers=PAGINATION)
async def search_threads(request: Request, body: ThreadSearch) -> Response:
    """Threads matching ``ids``/``metadata``/``values``/``status``, newest first."""
    body, access = await authorize_model(request, "threads", "search", body,
                                         ("metadata", "values", "status", "limit", "offset", "ids"))
    items, total, offset, limit = await ctx_of(request).threads.search(body, access)
    return json_response(items, headers=pagination_headers(offset, limit, len(items), total))


@operation(body=ThreadCount, ok=int)
async def count_threads(request: Request, body: ThreadCount) -> Response:
    """How many threads match."""
    body, access = await authorize_model(request, "threads", "search", body, ("metadata", "values", "status", "ids"),
                                         limit=0, offset=0)
    return json_response(await ctx_of(request).threads.count(body, access))


@operation(ok=Thread, errors=(404,))
async def get_thread(request: Request) -> Response:
    """A thread (404 when unknown)."""
    return json_response(public(await thread_for(request, "read", request.path_params["thread_id"])))


@operation(body=ThreadPatch, ok=Thread, errors=(404,))
async def patch_thread(request: Request, body: ThreadPatch) -> Response:
    """Merge metadata into a thread."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    body, access = await authorize_model(request, "threads", "update", body, ("metadata",), thread_id=thread_id)
    return json_response(await ctx.threads.patch(thread_id, body, access))


@operation(status=204, errors=(404,))
async def delete_thread(request: Request) -> Response:
    """Delete a thread with its runs and checkpoints (running runs are cancelled)."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await thread_for(request, "delete", thread_id)
    await ctx.service.delete_thread_data(thread_id)
    return no_content()


@operation(ok=Thread, errors=(404,))
async def copy_thread(request: Request) -> Response:
    """A new thread with the same metadata and a copy of the checkpoint history."""
    ctx = ctx_of(request)
    source = await thread_for(request, "read", request.path_params["thread_id"])
    new_id = str(uuid.uuid4())
    await authorize(request, "threads", "create", {"thread_id": new_id})
    doc = new_thread_doc(new_id, dict(source.get("metadata") or {}))
    await ctx.backend.docs.insert("thread", new_id, doc)
    await copy_checkpoints(ctx.backend.saver, source["thread_id"], new_id)
    await ctx.refresh_thread(new_id)
    thread = public(await ctx.threads.get(new_id))
    thread.pop("values", None)
    return json_response(thread)


@operation(body=ThreadPrune, ok=PruneResponse)
async def prune_threads(request: Request, body: ThreadPrune) -> Response:
    """Delete the given threads (``strategy: "delete"``, the default) or keep only their latest
    checkpoint of each namespace (``keep_latest``)."""
    ctx = ctx_of(request)
    ids = body.thread_ids
    access = await authorize(request, "threads", "delete", {"thread_ids": ids})
    if access is not None and any([await ctx.threads.find(t, access) is None for t in ids]):
        raise ApiError(404, "At least one thread not found or not authorized")
    pruned = 0
    for thread_id in ids:
        if await ctx.threads.find(thread_id, access) is None:
            continue
        if body.strategy == "keep_latest":
            await keep_latest_checkpoints(ctx.backend.saver, thread_id)
        else:
            await ctx.service.delete_thread_data(thread_id)
        pruned += 1
    return json_response({"pruned_count": pruned})


ROUTES = [
    Route("/threads", create_thread, methods=["POST"]),
    Route("/threads/search", search_threads, methods=["POST"]),
    Route("/threads/count", count_threads, methods=["POST"]),
    Route("/threads/prune", prune_threads, methods=["POST"]),
    Route("/threads/{thread_id}", get_thread, methods=["GET"]),
    Route("/threads/{thread_id}", patch_thread, methods=["PATCH"]),
    Route("/threads/{thread_id}", delete_thread, methods=["DELETE"]),
    Route("/threads/{thread_id}/copy", copy_thread, methods=["POST"]),
]
