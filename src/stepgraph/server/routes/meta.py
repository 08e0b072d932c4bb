"""``/ok``, ``/info`` and ``/openapi.json``."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.errors import json_response

__all__ = ["ROUTES", "server_version"]


def server_version() -> str:
    """stepgraph's version."""
    try:
        return version("stepgraph")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


async def ok(request: Request) -> Response:
    """Health check."""
    return json_response({"ok": True, "services": {}})


async def info(request: Request) -> Response:
    """Server version and feature flags."""
    ctx = request.app.state.ctx
    return json_response({
        "version": server_version(),
        "langgraph_py_version": server_version(),
        "runtime": "stepgraph",
        "flags": {"assistants": True, "crons": False, "langsmith": False, "langsmith_tracing_replicas": False},
        "host": {"kind": "self-hosted", "project_id": None, "host_revision_id": None, "revision_id": None,
                 "tenant_id": None},
        "graphs": ctx.registry.ids,
        "database": ctx.backend.name,
    })


async def openapi(request: Request) -> Response:
    """The OpenAPI document of this server."""
    from stepgraph.server.openapi import build_openapi

    doc = build_openapi(request.app.routes, server_version())
    authorizer = request.app.state.ctx.authorizer
    if authorizer is not None:
        from stepgraph.server.auth.openapi import apply_security

        apply_security(doc, authorizer.config.openapi)
    return json_response(doc)


ROUTES = [
    Route("/ok", ok, methods=["GET"]),
    Route("/info", info, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
]
