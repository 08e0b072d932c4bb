"""``/ok``, ``/info`` and ``/openapi.json``."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.endpoint import operation
from stepgraph.server.errors import json_response
from stepgraph.server.schemas.fields import JsonObject
from stepgraph.server.schemas.meta import Info, Ok

__all__ = ["ROUTES", "server_version"]


def server_version() -> str:
    """stepgraph's version."""
    try:
        return version("stepgraph")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


@operation(ok=Ok)
async def ok(request: Request) -> Response:
    """Health check."""
    return json_response({"ok": True, "services": {}})


@operation(ok=Info)
async def info(request: Request) -> Response:
    """Server version and feature flags."""
    ctx = request.app.state.ctx
    return json_response({
        "version": server_version(),
        "langgraph_py_version": server_version(),
        "runtime": "stepgraph",
        "flags": {"assistants": True, "crons": True, "langsmith": False, "langsmith_tracing_replicas": False},
        "host": {"kind": "self-hosted", "project_id": None, "host_revision_id": None, "revision_id": None,
                 "tenant_id": None},
        "graphs": ctx.registry.ids,
        "database": ctx.backend.name,
    })


@operation(ok=JsonObject)
async def openapi(request: Request) -> Response:
    """The OpenAPI document of this server."""
    from stepgraph.server.openapi import build_openapi

    state = request.app.state
    if getattr(state, "openapi", None) is None:
        doc = build_openapi(request.app.routes, server_version(), graph_ids=state.ctx.registry.ids)
        authorizer = state.ctx.authorizer
        if authorizer is not None:
            from stepgraph.server.auth.openapi import apply_auth

            apply_auth(doc, authorizer.config.openapi)
        state.openapi = doc
    return json_response(state.openapi)


ROUTES = [
    Route("/ok", ok, methods=["GET"]),
    Route("/info", info, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
]
