"""Server settings and the ``stepgraph.json`` / ``langgraph.json`` config file."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepgraph.server.config_errors import ConfigError
from stepgraph.server.config_http import HttpSettings
from stepgraph.server.config_store import StoreSettings
from stepgraph.server.config_webhooks import WebhookSettings
from stepgraph.server.runtime.ttl import ThreadTtlPolicy

if TYPE_CHECKING:
    from stepgraph.server.cluster.options import ClusterOptions
    from stepgraph.server.config_schema import AuthConfig, CorsConfig
    from stepgraph.server.runtime.limits import RuntimeLimits

__all__ = ["ConfigError", "ServerSettings", "apply_dependencies", "apply_env", "find_config", "load_settings"]

CONFIG_NAMES = ("stepgraph.json", "langgraph.json")

@dataclass
class ServerSettings:
    """Everything ``create_app`` needs.

    ``graphs`` maps a graph id to ``"./file.py:variable"`` / ``"package.module:variable"``
    (resolved against ``base_dir``) or directly to a graph object, builder or factory.
    ``database_url`` selects PostgreSQL (``postgres://...``); otherwise SQLite at
    ``database_url`` or, by default, ``base_dir/.stepgraph/stepgraph.sqlite``.
    ``protocol_start_delay`` seconds pass between a v3 ``run.start`` / ``input.respond``
    command and its run starting: the JS SDK opens (and re-opens) its event streams right
    after the command returns, and a run that already finished by then reaches a new
    subscription only partly through an older, narrower stream (LangGraph's server has a
    similar dispatch latency).

    From the config file (``config_policy`` decides every key): ``graph_descriptions``
    (the system assistants' descriptions), ``dependencies`` (local folders put on
    ``sys.path``), ``env``, ``cors`` (``http.cors``; ``None`` allows loopback origins only),
    ``auth`` (the ``auth`` key, validated; enforced by ``server/auth``), ``webhooks`` and
    ``notes`` (start-up log lines about build-time keys). ``allowed_hosts``: the ``Host``
    header values accepted (``None``: loopback names when bound to a loopback address, any
    otherwise; ``["*"]`` turns the check off).

    ``max_body_bytes`` / ``max_json_depth`` bound each request (``None``: the environment's
    ``HTTP_MAX_REQUEST_BODY_BYTES`` / ``STEPGRAPH_MAX_JSON_DEPTH``, else 10 MiB / 64 levels;
    see ``request_limits``); ``limits`` are the run machinery's memory budgets, not a bound
    on requests.
    """

    graphs: dict[str, Any]
    base_dir: Path = field(default_factory=Path.cwd)
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 2024
    n_jobs: int = 10
    heartbeat: float = 5.0
    protocol_start_delay: float = 0.1
    env: dict[str, str] = field(default_factory=dict)
    config_path: Path | None = None
    graph_descriptions: dict[str, str] = field(default_factory=dict)
    dependencies: list[Path] = field(default_factory=list)
    cors: CorsConfig | None = None
    auth: AuthConfig | None = None
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    thread_ttl: ThreadTtlPolicy = field(default_factory=ThreadTtlPolicy)
    """``checkpointer.ttl``: the default TTL of threads and how often expired ones are swept."""
    http: HttpSettings = field(default_factory=HttpSettings)
    """The ``http`` section: route groups removed, custom app, mount prefix, configurable headers."""
    store: StoreSettings = field(default_factory=StoreSettings)
    """``store.index`` / ``store.ttl``."""
    allowed_hosts: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    limits: RuntimeLimits | None = None
    """Memory budgets and attempts of the run machinery (``None``: defaults and environment,
    see ``runtime.limits``)."""
    max_body_bytes: int | None = None
    """The largest request body in bytes (413 beyond it; ``request_limits``)."""
    max_json_depth: int | None = None
    """How deeply a request's JSON may nest (``request_limits``)."""
    cluster: ClusterOptions | None = None
    """Run as part of a cluster (``--role``, ``--redis-url``; ``server.cluster``): ``None`` runs
    every run in this process."""
    dev: bool = False
    """Started as ``stepgraph dev`` (lets LangSmith Studio in, as ``langgraph dev`` does)."""

    @property
    def default_db_path(self) -> Path:
        """The SQLite file used when no ``database_url`` is given."""
        return self.base_dir / ".stepgraph" / "stepgraph.sqlite"


def find_config(path: str | None) -> Path:
    """The config file: ``path`` if given, else ``stepgraph.json`` or ``langgraph.json`` here."""
    if path:
        found = Path(path)
        if found.is_dir():
            for name in CONFIG_NAMES:
                if (found / name).is_file():
                    return found / name
            raise ConfigError(f"No {' or '.join(CONFIG_NAMES)} in {found}")
        if not found.is_file():
            raise ConfigError(f"Config file not found: {found}")
        return found
    for name in CONFIG_NAMES:
        if Path(name).is_file():
            return Path(name)
    raise ConfigError(f"No {' or '.join(CONFIG_NAMES)} in the current directory (pass --config).")


def load_settings(path: Path, **overrides: Any) -> ServerSettings:
    """Read ``path`` (a ``stepgraph.json`` or ``langgraph.json``) into ``ServerSettings``.

    Every key is honoured or refused here (``ConfigError`` lists each refused key with its
    code, the reason and a hint); paths must exist. Nothing is imported or set yet:
    ``create_app`` applies ``env`` and ``dependencies`` and loads the graphs.
    """
    from stepgraph.server.config_policy import decide
    from stepgraph.server.config_schema import parse_config

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}") from None
    config = parse_config(data, str(path))
    base = path.resolve().parent
    decided = decide(config, base, str(path), os.environ)
    settings = ServerSettings(graphs=decided.graphs, base_dir=base, config_path=path.resolve(),
                              env=decided.env, graph_descriptions=decided.descriptions,
                              dependencies=decided.dependencies, cors=decided.cors, auth=decided.auth,
                              webhooks=decided.webhooks, notes=decided.notes,
                              thread_ttl=decided.thread_ttl, http=decided.http, store=decided.store)
    for key, value in overrides.items():
        if not hasattr(settings, key):
            raise TypeError(f"load_settings: unknown setting {key!r}")
        if value is not None:
            setattr(settings, key, value)
    return settings


def apply_env(env: dict[str, str]) -> None:
    """Set variables from the config's ``env`` that the environment does not already set."""
    for key, value in env.items():
        os.environ.setdefault(key, value)


def apply_dependencies(paths: list[Path]) -> None:
    """Put the config's local ``dependencies`` folders on ``sys.path`` (as ``langgraph dev``)."""
    for dep in paths:
        if str(dep) not in sys.path:
            sys.path.append(str(dep))
