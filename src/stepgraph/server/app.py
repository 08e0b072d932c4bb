"""``create_app``: the ASGI application (Starlette) of the stepgraph server."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware

from stepgraph.server.bodylimit import BodyLimitMiddleware
from stepgraph.server.context import ServerContext
from stepgraph.server.cors import CORSMiddleware
from stepgraph.server.errors import install_handlers
from stepgraph.server.graphs import GraphRegistry
from stepgraph.server.limits import LimitError, RequestLimits
from stepgraph.server.routes import all_routes
from stepgraph.server.runtime.eventlog import MemoryEventLog
from stepgraph.server.runtime.executor import RunExecutor
from stepgraph.server.runtime.queue import LocalRunQueue
from stepgraph.server.runtime.service import RunService
from stepgraph.server.runtime.threadlog import ThreadLogs
from stepgraph.server.settings import ConfigError, ServerSettings, apply_env
from stepgraph.server.storage import open_backend

__all__ = ["create_app"]

logger = logging.getLogger("stepgraph.server")


def create_app(settings: ServerSettings, *, registry: GraphRegistry | None = None) -> Starlette:
    """The server app for ``settings``.

    Graphs are imported here (so a broken graph fails before serving); the database is
    opened, system assistants are created and interrupted work is recovered when the app
    starts (ASGI lifespan), and running runs are cancelled when it stops.
    """
    apply_env(settings.env)
    try:
        limits = RequestLimits.resolve(settings)
    except LimitError as exc:
        raise ConfigError(str(exc)) from None
    if registry is None:
        registry = GraphRegistry(settings.graphs, settings.base_dir)
        registry.load()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_backend(settings.database_url, settings.default_db_path) as backend:
            ctx = ServerContext(settings, registry, backend)
            executor = RunExecutor(ctx)
            ctx.events = MemoryEventLog()
            ctx.thread_logs = ThreadLogs()
            ctx.queue = LocalRunQueue(executor, executor.cancel_pending, n_jobs=settings.n_jobs)
            ctx.service = RunService(ctx)
            await ctx.assistants.ensure_system()
            await ctx.service.recover()
            app.state.ctx = ctx
            logger.info("stepgraph server: %d graph(s) [%s], %s at %s", len(registry.ids),
                        ", ".join(registry.ids), backend.name, backend.location)
            try:
                yield
            finally:
                await ctx.queue.shutdown()
                ctx.thread_logs.close_all()

    middleware: list[Any] = [Middleware(CORSMiddleware),
                             Middleware(BodyLimitMiddleware, max_bytes=limits.max_body_bytes)]
    app = Starlette(routes=all_routes(), lifespan=lifespan, middleware=middleware,
                    exception_handlers=install_handlers())
    app.state.limits = limits
    return app
