"""HTTP routes, one module per resource."""

from __future__ import annotations

from starlette.routing import BaseRoute

__all__ = ["all_routes"]


def all_routes() -> list[BaseRoute]:
    """Every route of the API, in matching order."""
    from stepgraph.server.routes import (
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

    return [*meta.ROUTES, *assistants.ROUTES, *threads.ROUTES, *state.ROUTES, *crons.ROUTES, *runs.ROUTES,
            *run_ops.ROUTES, *store.ROUTES, *v3.ROUTES]
