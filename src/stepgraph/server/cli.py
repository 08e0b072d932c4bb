"""``stepgraph dev`` / ``stepgraph serve``: host the graphs of a ``stepgraph.json`` over HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from stepgraph.server.settings import ConfigError, find_config, load_settings

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
        p.add_argument("--n-jobs-per-worker", type=int, default=10, help="runs executed at once (default 10)")
        p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
        for flag in ("--no-browser", "--no-reload", "--allow-blocking"):
            p.add_argument(flag, action="store_true", help="accepted for compatibility; ignored")
    return parser


def run_cli(argv: Sequence[str]) -> int:
    """Parse ``argv`` and run the server until interrupted; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.command is None:
        parser.print_help()
        return 2
    try:
        settings = load_settings(find_config(args.config), host=args.host, port=args.port,
                                 database_url=args.database_url, n_jobs=args.n_jobs_per_worker)
        from stepgraph.server.app import create_app

        app = create_app(settings)
    except ConfigError as exc:
        print(f"stepgraph: {exc}", file=sys.stderr)
        return 1
    import uvicorn

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s:     %(message)s")
    db = settings.database_url or str(settings.default_db_path)
    print(f"stepgraph {args.command}: http://{settings.host}:{settings.port}  "
          f"(graphs: {', '.join(settings.graphs)}; database: {_redact(db)})", flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=args.log_level, access_log=False,
                timeout_graceful_shutdown=5)
    return 0


def _redact(url: str) -> str:
    if "://" in url and "@" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    return url
