"""Crons: create (stateless or on a thread), search, count, patch, delete.

Each operation runs the ``@auth.on.crons.<action>`` handler first, as LangGraph's server does:
``create`` sees ``{payload, schedule, cron_id, thread_id, user_id, end_time, metadata}`` (what it
sets in ``metadata`` is stored: a handler stamping an owner works as for threads), ``read``/
``update``/``delete`` see ``{cron_id, ...}`` and ``search`` the filters; the filter a handler
returns applies to the crons' ``metadata`` (404 for a cron the user may not see).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize, authorize_model, request_auth
from stepgraph.server.auth.guard import run_auth_configurable
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.resources.common import pagination_headers
from stepgraph.server.resources.crons import RUN_KEYS, public
from stepgraph.server.routes._common import PAGINATION, ctx_of, no_content, thread_for
from stepgraph.server.runtime.webhooks import check_webhook
from stepgraph.server.schemas.crons import (
    Cron,
    CronCount,
    CronCreate,
    CronFields,
    CronPatch,
    CronSearch,
)
from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.validation import validate

__all__ = ["ROUTES"]


def _stored_auth(request: Request) -> dict[str, Any] | None:
    auth = request_auth(request)
    if auth is None:
        return None
    keys = run_auth_configurable(auth)
    return {"identity": auth.identity, "user": keys["langgraph_auth_user"],
            "permissions": keys["langgraph_auth_permissions"]}


async def _create(request: Request, body: CronCreate, thread_id: str | None) -> Response:
    ctx = ctx_of(request)
    if thread_id is not None:
        await thread_for(request, "read", thread_id)
    if (as_dict(body.config) or {}).get("configurable") and body.context:
        raise ApiError(400, "Cannot specify both configurable and context. Prefer setting context alone.")
    await check_webhook(ctx.settings.webhooks, body.webhook)
    assistant = await ctx.assistants.resolve(body.assistant_id)
    auth = request_auth(request)
    if auth is not None:
        sent = as_dict(body) or {}
        value: dict[str, Any] = {
            "payload": {k: sent[k] for k in RUN_KEYS if k in sent}, "schedule": body.schedule,
            "cron_id": None, "thread_id": thread_id, "user_id": auth.identity, "end_time": body.end_time,
            "metadata": dict(body.metadata or {}),
        }
        await authorize(request, "crons", "create", value)
        if value.get("metadata") != (body.metadata or {}):
            body = validate(CronCreate, {**sent, "metadata": value.get("metadata")})
    cron = await ctx.crons.create(body, assistant_id=assistant["assistant_id"], thread_id=thread_id,
                                  auth=_stored_auth(request))
    ctx.cron_scheduler.wake()
    return json_response(public(cron))


@operation(body=CronCreate, ok=Cron, errors=(400, 404))
async def create_for_thread(request: Request, body: CronCreate) -> Response:
    """Schedule runs on a thread (every firing runs on it)."""
    return await _create(request, body, request.path_params["thread_id"])


@operation(body=CronCreate, ok=Cron, errors=(400, 404))
async def create(request: Request, body: CronCreate) -> Response:
    """Schedule stateless runs: each firing runs on a new thread (``on_run_completed``)."""
    return await _create(request, body, None)


@operation(body=CronSearch, ok=list[CronFields], response_headers=PAGINATION)
async def search(request: Request, body: CronSearch) -> Response:
    """Crons matching ``assistant_id`` (a UUID), ``thread_id``, ``enabled``, ``metadata``; newest first."""
    body, access = await authorize_model(request, "crons", "search", body,
                                         ("assistant_id", "thread_id", "metadata", "limit", "offset"))
    items, total, offset, limit = await ctx_of(request).crons.search(body, access)
    return json_response(items, headers=pagination_headers(offset, limit, len(items), total))


@operation(body=CronCount, ok=int)
async def count(request: Request, body: CronCount) -> Response:
    """How many crons match."""
    body, access = await authorize_model(request, "crons", "search", body,
                                         ("assistant_id", "thread_id", "metadata"), limit=0, offset=0)
    return json_response(await ctx_of(request).crons.count(body, access))


@operation(ok=Cron, errors=(404,))
async def get(request: Request) -> Response:
    """A cron by id."""
    cron_id = request.path_params["cron_id"]
    access = await authorize(request, "crons", "read", {"cron_id": cron_id})
    return json_response(public(await ctx_of(request).crons.get(cron_id, access)))


@operation(body=CronPatch, ok=Cron, errors=(404, 409))
async def patch(request: Request, body: CronPatch) -> Response:
    """Change a cron's schedule, time zone, end time, payload, metadata or ``enabled``."""
    ctx = ctx_of(request)
    cron_id = request.path_params["cron_id"]
    sent = as_dict(body) or {}
    access = await authorize(request, "crons", "update", {
        "cron_id": cron_id, "payload": {k: sent[k] for k in RUN_KEYS if k in sent}, "schedule": body.schedule})
    await check_webhook(ctx.settings.webhooks, body.webhook)
    cron = await ctx.crons.patch(cron_id, body, access)
    ctx.cron_scheduler.wake()
    return json_response(public(cron))


@operation(status=204, errors=(404,))
async def delete(request: Request) -> Response:
    """Delete a cron (runs it already started go on)."""
    cron_id = request.path_params["cron_id"]
    access = await authorize(request, "crons", "delete", {"cron_id": cron_id})
    await ctx_of(request).crons.delete(cron_id, access)
    return no_content()


ROUTES = [
    Route("/threads/{thread_id}/runs/crons", create_for_thread, methods=["POST"]),
    Route("/runs/crons", create, methods=["POST"]),
    Route("/runs/crons/search", search, methods=["POST"]),
    Route("/runs/crons/count", count, methods=["POST"]),
    Route("/runs/crons/{cron_id}", get, methods=["GET"]),
    Route("/runs/crons/{cron_id}", patch, methods=["PATCH"]),
    Route("/runs/crons/{cron_id}", delete, methods=["DELETE"]),
]
