"""HTTP routes, one module per resource."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.routing import BaseRoute

__all__ = ["all_routes", "route_group"]

_META = ("/info", "/openapi.json", "/metrics", "/docs")


def route_group(path: str) -> str | None:
    """The ``http.disable_<group>`` group of a route path (``None``: always served, e.g. ``/ok``).

    As on LangGraph, a thread's runs (``/threads/{id}/runs...``) belong to ``runs``.
    """
    if path in _META or path.startswith("/docs"):
        return "meta"
    first = path.strip("/").split("/", 1)[0]
    if first == "threads" and "/runs" in path:
        return "runs"
    if first in ("assistants", "threads", "runs", "store", "mcp", "a2a"):
        return first
    if first == ".well-known":
        return "a2a"
    return None


def all_routes(disabled: Iterable[str] = ()) -> list[BaseRoute]:
    """Every route of the API, in matching order, less the ``disabled`` groups."""
    from stepgraph.server.routes import (
        a2a,
        assistants,
        crons,
        meta,
        run_ops,
        runs,
        state,
        store,
        threads,
        v3,
    )

    routes = [*meta.ROUTES, *assistants.ROUTES, *threads.ROUTES, *state.ROUTES, *crons.ROUTES,
              *runs.ROUTES,
              *run_ops.ROUTES, *store.ROUTES, *v3.ROUTES, *a2a.ROUTES]
    off = set(disabled)
    return [r for r in routes if route_group(getattr(r, "path", "")) not in off]
