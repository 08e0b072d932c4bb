"""``/ok``, ``/info``, ``/metrics``, ``/openapi.json`` and ``/docs``."""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from importlib import resources
from importlib.metadata import PackageNotFoundError, version

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from stepgraph.server.endpoint import operation
from stepgraph.server.errors import json_response
from stepgraph.server.schemas.fields import JsonObject
from stepgraph.server.schemas.meta import Info, MetricsQuery, Ok

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


@operation(query=MetricsQuery, ok=str, media="text/plain", alt_media=(("application/json", {"type": "object"}),))
async def metrics(request: Request, query: MetricsQuery) -> Response:
    """Run metrics: pending, running, finished per graph and status, queue wait and run duration
    histograms (Prometheus text, or ``?format=json``)."""
    found = request.app.state.ctx.metrics
    await found.refresh()
    if query.format == "json":
        return json_response(found.as_json())
    from prometheus_client import CONTENT_TYPE_LATEST

    return Response(found.prometheus(), media_type=CONTENT_TYPE_LATEST)


@functools.cache
def _docs_page() -> tuple[bytes, str]:
    """The API reference page shipped with the package, and its Content-Security-Policy (the
    page's one inline script by hash; nothing is loaded from elsewhere)."""
    text = resources.files("stepgraph.server").joinpath("static/docs.html").read_text(encoding="utf-8")
    script = re.search(r"<script>(.*?)</script>", text, re.S)
    digest = base64.b64encode(hashlib.sha256((script.group(1) if script else "").encode()).digest()).decode()
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
              "frame-ancestors 'none'")
    return text.encode(), policy


@operation(ok=str, media="text/html")
async def docs(request: Request) -> Response:
    """An API reference page rendering ``/openapi.json`` (served locally, no CDN)."""
    page, policy = _docs_page()
    return HTMLResponse(page, headers={"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff"})


ROUTES = [
    Route("/ok", ok, methods=["GET"]),
    Route("/info", info, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
]
