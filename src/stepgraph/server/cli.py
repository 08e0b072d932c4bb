"""``stepgraph dev`` / ``stepgraph serve``: host the graphs of a ``stepgraph.json`` over HTTP."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stepgraph.server.settings import ConfigError, find_config, load_settings

if TYPE_CHECKING:
    from stepgraph.server.cluster.options import ClusterOptions

__all__ = ["build_parser", "run_cli"]


def build_parser() -> argparse.ArgumentParser:
    """The ``stepgraph`` argument parser."""
    parser = argparse.ArgumentParser(prog="stepgraph", description="Host stepgraph graphs over HTTP "
                                     "(LangGraph Server API).")
    sub = parser.add_subparsers(dest="command", metavar="{dev,serve}")
    for name, text in (("dev", "run the server for development"), ("serve", "run the server")):
        p = sub.add_parser(name, help=text, description=f"{text.capitalize()}.")
        p.add_argument("--config", "-c", default=None,
                       help="stepgraph.json or langgraph.json (default: one in the current directory)")
        p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
        p.add_argument("--port", type=int, default=2024, help="port (default 2024)")
        p.add_argument("--database-url", default=None,
                       help="postgres://... for PostgreSQL, or a SQLite file "
                            "(default .stepgraph/stepgraph.sqlite next to the config)")
        p.add_argument("--n-jobs-per-worker", "--jobs", dest="n_jobs_per_worker", type=int, default=10,
                       help="runs executed at once by this process (default 10)")
        p.add_argument("--role", choices=["all", "api", "worker"], default="all",
                       help="cluster role: api (HTTP only, never runs graph code), worker (claims and "
                            "executes runs) or all (default; both, today's single process)")
        p.add_argument("--redis-url", default=None,
                       help="redis://... for the run event streams of a cluster (implies cluster mode; "
                            "without it a cluster keeps events in PostgreSQL)")
        p.add_argument("--cluster", action="store_true",
                       help="share runs with other processes on the same PostgreSQL even with --role all")
        p.add_argument("--lease-ttl", type=float, default=None,
                       help="seconds a worker's claim on a run lasts without a heartbeat "
                            "(default $STEPGRAPH_LEASE_TTL_S or 30)")
        p.add_argument("--heartbeat-interval", type=float, default=None,
                       help="seconds between lease renewals (default $STEPGRAPH_HEARTBEAT_S or 10)")
        p.add_argument("--reaper-interval", type=float, default=None,
                       help="seconds between looks for expired leases (default $STEPGRAPH_REAPER_S or 15)")
        p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
        p.add_argument("--log-format", default=None, choices=["text", "json"],
                       help="text (default) or one JSON object per line (also LOG_JSON=true, as on LangGraph)")
        p.add_argument("--allowed-hosts", default=None, metavar="HOST[,HOST...]",
                       help="Host header names to accept besides localhost, 127.0.0.1 and [::1], any "
                            "port (DNS-rebinding defence; '*.example.com' for subdomains, '*' for any). "
                            "Without it: only those three when bound to a loopback address, any otherwise")
        p.add_argument("--studio", action=argparse.BooleanOptionalAction, default=None,
                       help="serve the local studio at /ui (default: on in dev, off in serve; "
                            "the config's http.studio)")
        p.add_argument("--no-browser", action="store_true",
                       help="accepted for langgraph dev compatibility: stepgraph never opens a browser")
        p.add_argument("--no-reload", action="store_true",
                       help="accepted for langgraph dev compatibility: stepgraph never reloads on code "
                            "changes (restart it after editing a graph)")
        p.add_argument("--allow-blocking", action="store_true",
                       help="accepted for langgraph dev compatibility: stepgraph never raises on blocking "
                            "calls in graph code (sync nodes run in worker threads)")
    return parser


def run_cli(argv: Sequence[str]) -> int:
    """Parse ``argv`` and run the server until interrupted; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.command is None:
        parser.print_help()
        return 2
    from stepgraph.server.logjson import configure_logging, log_format_from_env

    log_format = args.log_format or log_format_from_env()
    configure_logging(args.log_level, log_format)
    hosts = [h for h in args.allowed_hosts.split(",") if h.strip()] if args.allowed_hosts else None
    try:
        cluster = cluster_options(args)
        settings = load_settings(find_config(args.config), host=args.host, port=args.port,
                                 database_url=args.database_url, n_jobs=args.n_jobs_per_worker,
                                 allowed_hosts=hosts, dev=args.command == "dev", cluster=cluster)
        if args.studio is not None:
            settings.http.studio = args.studio
        from stepgraph.server.app import create_app

        app = create_app(settings)
    except ConfigError as exc:
        print(f"stepgraph: {exc}", file=sys.stderr)
        return 1
    import uvicorn

    from stepgraph.server.hosts import is_loopback_bind

    if not is_loopback_bind(settings.host) and settings.auth is None:
        print(exposed_warning(settings.host, settings.port), file=sys.stderr, flush=True)
    db = settings.database_url or str(settings.default_db_path)
    print(f"stepgraph {args.command}: http://{settings.host}:{settings.port}  "
          f"(graphs: {', '.join(settings.graphs)}; database: {_redact(db)})", flush=True)
    from stepgraph.server.ui_routes import studio_enabled

    if studio_enabled(settings):
        host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
        host = f"[{host}]" if ":" in host else host
        print(f"studio: http://{host}:{settings.port}{settings.http.mount_prefix}/ui/", flush=True)
    extra = {"log_config": None} if log_format == "json" else {}
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=args.log_level, access_log=False,
                timeout_graceful_shutdown=5, **extra)
    return 0


def cluster_options(args: argparse.Namespace) -> ClusterOptions | None:
    """The cluster options of the flags (``None``: one process runs everything itself)."""
    from stepgraph.server.cluster.options import ClusterOptions

    wanted = args.role != "all" or args.redis_url or args.cluster
    if not wanted:
        return None
    url = args.database_url or ""
    if not url.startswith(("postgres://", "postgresql://")):
        raise ConfigError("--role api/worker, --redis-url and --cluster need a shared PostgreSQL: "
                          "pass --database-url postgresql://...")
    try:
        return ClusterOptions.from_env(role=args.role, redis_url=args.redis_url, lease_ttl=args.lease_ttl,
                                       heartbeat=args.heartbeat_interval, reaper=args.reaper_interval)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def exposed_warning(host: str, port: int) -> str:
    """The start-up banner of a server reachable from the network without auth."""
    lines = [
        f"WARNING: stepgraph is listening on {host}:{port}, beyond this machine, WITHOUT AUTHENTICATION.",
        "Anyone who can reach this address can read every thread and run any graph with your credentials.",
        'Add custom auth ("auth": {"path": "./auth.py:auth"} in the config) or bind 127.0.0.1.',
    ]
    width = max(len(line) for line in lines)
    bar = "!" * (width + 4)
    return "\n".join([bar, *(f"! {line.ljust(width)} !" for line in lines), bar])


def _redact(url: str) -> str:
    if "://" in url and "@" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    return url
