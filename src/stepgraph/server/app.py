"""``create_app``: the ASGI application (Starlette) of the stepgraph server."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware

from stepgraph.server.bodylimit import BodyLimitMiddleware
from stepgraph.server.cluster.options import ClusterOptions
from stepgraph.server.cluster.options import pool_size as cluster_pool_size
from stepgraph.server.config_errors import CONFIG_INVALID
from stepgraph.server.config_store import index_config
from stepgraph.server.context import ServerContext
from stepgraph.server.cors import cors_middleware
from stepgraph.server.custom_app import (
    CustomRoutes,
    PrefixMiddleware,
    custom_route_matcher,
    load_custom_app,
)
from stepgraph.server.errors import install_handlers
from stepgraph.server.graphs import GraphRegistry
from stepgraph.server.hosts import HostCheckMiddleware, allowed_hosts_for
from stepgraph.server.request_limits import RequestLimitError, RequestLimits
from stepgraph.server.routes import all_routes
from stepgraph.server.runtime.crons import CronScheduler
from stepgraph.server.runtime.eventlog import MemoryEventLog
from stepgraph.server.runtime.executor import RunExecutor
from stepgraph.server.runtime.limits import LimitError, RuntimeLimits
from stepgraph.server.runtime.metrics import RunMetrics
from stepgraph.server.runtime.queue import LocalRunQueue
from stepgraph.server.runtime.service import RunService
from stepgraph.server.runtime.store_sweep import sweeping
from stepgraph.server.runtime.threadlog import ThreadLogs
from stepgraph.server.runtime.ttl import TtlSweeper
from stepgraph.server.settings import ConfigError, ServerSettings, apply_dependencies, apply_env
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
    apply_dependencies(settings.dependencies)
    try:
        limits = settings.limits or RuntimeLimits.from_env()
        request_limits = RequestLimits.resolve(settings)
    except (LimitError, RequestLimitError) as exc:
        raise ConfigError(str(exc), code=CONFIG_INVALID) from None
    if registry is None:
        registry = GraphRegistry(settings.graphs, settings.base_dir, descriptions=settings.graph_descriptions)
        registry.load()
    authorizer = _load_auth(settings)
    http = settings.http
    custom = load_custom_app(http.app, settings.base_dir) if http.app else None
    store_index = _store_index(settings)
    mcp = _mcp_endpoint(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        cluster = settings.cluster
        pool_size = None
        if cluster is not None:
            pool_size = cluster_pool_size(cluster.role, settings.n_jobs)
        async with open_backend(settings.database_url, settings.default_db_path, pool_size=pool_size,
                                store_index=store_index, store_ttl=settings.store.ttl,
                                check_connections=cluster is not None) as backend, \
                contextlib.AsyncExitStack() as stack:
            ctx = ServerContext(settings, registry, backend)
            ctx.limits = limits
            ctx.authorizer = authorizer
            parts = None
            queue_opts = cluster if cluster is not None else _one_process_queue(backend)
            if queue_opts is not None:  # the cluster's queue, leases, events (PostgreSQL or the SQLite file)
                from stepgraph.server.cluster.wiring import start_cluster

                parts = await start_cluster(ctx, queue_opts, n_jobs=settings.n_jobs)
            else:  # an in-memory database: runs are tasks of this process
                executor = RunExecutor(ctx)
                ctx.events = MemoryEventLog(max_bytes=limits.run_log_bytes,
                                            finished_bytes=limits.finished_logs_bytes)
                ctx.thread_logs = ThreadLogs(max_bytes=limits.thread_log_bytes, total_bytes=limits.thread_logs_bytes)
                ctx.queue = LocalRunQueue(executor, executor.cancel_pending, n_jobs=settings.n_jobs,
                                          finished_bytes=limits.finished_runs_bytes)
                ctx.service = RunService(ctx)
            ctx.metrics = RunMetrics(ctx.queue.active, settings.n_jobs,
                                     live=getattr(ctx.service, "live_runs", None))
            await ctx.assistants.ensure_system()
            await ctx.service.recover()
            ctx.ttl_sweeper = TtlSweeper(ctx, settings.thread_ttl)
            ctx.ttl_sweeper.start()
            ctx.cron_scheduler = CronScheduler(ctx)
            ctx.cron_scheduler.start()
            await stack.enter_async_context(sweeping(backend.store, settings.store.sweep_minutes))
            if mcp is not None:
                await stack.enter_async_context(mcp.running(ctx))
            app.state.ctx = ctx
            if custom is not None:
                await stack.enter_async_context(custom.router.lifespan_context(custom))
            for note in settings.notes:
                logger.info("%s", note)
            logger.info("stepgraph server: %d graph(s) [%s], %s at %s", len(registry.ids),
                        ", ".join(registry.ids), backend.name, backend.location)
            try:
                yield
            finally:
                await ctx.cron_scheduler.stop()
                await ctx.ttl_sweeper.stop()
                if parts is not None:
                    await parts.stop()
                else:
                    await ctx.queue.shutdown()
                ctx.thread_logs.close_all()

    # Outermost first: CORS (its headers on every answer, preflights answered here), the Host
    # check (before anything reads the body), the mount prefix, the body limit (before auth's
    # authenticate handler may read the body), then auth and the custom app's middleware in
    # ``http.middleware_order``.
    middleware: list[Any] = [
        cors_middleware(settings.cors),
        Middleware(HostCheckMiddleware, allowed_hosts=allowed_hosts_for(settings.host, settings.allowed_hosts),
                   bind=settings.host),
    ]
    if http.mount_prefix:
        middleware.append(Middleware(PrefixMiddleware, prefix=http.mount_prefix))
    middleware.append(Middleware(BodyLimitMiddleware, max_bytes=request_limits.max_body_bytes))
    routes = all_routes(http.disabled)
    if mcp is not None:
        from stepgraph.server.mcp import mcp_routes

        routes += mcp_routes(mcp)
    from stepgraph.server.ui_routes import is_ui_path, studio_enabled, ui_routes

    studio = studio_enabled(settings)
    if studio:  # the studio's files (public: they hold no data; its API calls pass auth)
        routes += ui_routes()
    auth_layer: list[Any] = []
    custom_routes = CustomRoutes(custom) if custom is not None else None
    if authorizer is not None:
        from stepgraph.server.auth import AuthMiddleware

        skip = None if custom_routes is None or http.enable_custom_route_auth else custom_route_matcher(custom_routes)
        if studio:
            skip = _or_ui(skip, is_ui_path)
        auth_layer.append(Middleware(AuthMiddleware, authorizer=authorizer, skip=skip))
    user_layer = list(custom.user_middleware) if custom is not None else []
    if http.middleware_order == "auth_first":
        middleware += auth_layer + user_layer
    else:
        middleware += user_layer + auth_layer
    if custom_routes is not None:
        routes.insert(0, custom_routes)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware,
                    exception_handlers=install_handlers())
    app.state.request_limits = request_limits
    return app


def _one_process_queue(backend: Any) -> Any:
    """The queue options of a process without cluster flags: on a SQLite file it runs the
    cluster's code (queue table, leases, fencing, reaper, events in the file) as its only
    process; ``None`` (runs as tasks of this process) for an in-memory database and for
    PostgreSQL without cluster flags."""
    if backend.name != "sqlite" or backend.location == ":memory:":
        return None
    opts = ClusterOptions.from_env(role="all")
    opts.redis_url = None
    return opts


def _or_ui(skip: Any, ui: Any) -> Any:
    """Auth's ``skip``: the custom routes it skips (if any) and the studio's files."""
    return ui if skip is None else (lambda scope: ui(scope) or skip(scope))


def _store_index(settings: ServerSettings) -> dict[str, Any] | None:
    """``store.index`` with its ``embed`` loaded and checked (a broken one fails like a graph)."""
    index = index_config(settings.store, settings.base_dir)
    if index is not None:
        from stepgraph.store._embed import Index
        from stepgraph.store.base import StoreError

        try:
            index["embed"] = Index(index).embedder.model  # type: ignore[arg-type]
        except StoreError as exc:  # not an embedding, or a model string LangChain cannot load
            raise ConfigError(f"store.index.embed: {exc}", code=CONFIG_INVALID) from None
    return index


def _mcp_endpoint(settings: ServerSettings) -> Any:
    """The ``/mcp`` endpoint, unless ``http.disable_mcp`` (or the ``mcp`` package is missing)."""
    if "mcp" in settings.http.disabled:
        return None
    try:
        import mcp  # noqa: F401
    except ImportError:
        logger.info("MCP (/mcp) is off: the `mcp` package is not installed (pip install 'stepgraph[server]')")
        return None
    from stepgraph.server.mcp import McpEndpoint

    return McpEndpoint()


def _load_auth(settings: ServerSettings) -> Any:
    """The ``Authorizer`` of the ``auth`` section (``None`` without one); fails like a graph."""
    if settings.auth is None:
        return None
    from stepgraph.server.auth import AuthConfig, load_authorizer, parse_auth_config

    config: Any = settings.auth
    if not isinstance(config, AuthConfig):  # the config file's (schema-checked) section, or a dict
        raw = config.model_dump(exclude_none=True) if hasattr(config, "model_dump") else config
        config = parse_auth_config(raw, settings.base_dir)
    authorizer = load_authorizer(config, settings.base_dir, dev=settings.dev)
    if config.openapi is None:
        logger.warning("custom auth without \"openapi\" in the auth section: the OpenAPI document "
                       "shows no security scheme")
    logger.info("custom auth: %s%s", config.path,
                " (LangSmith Studio requests come in as StudioUser)" if authorizer.studio else "")
    return authorizer
