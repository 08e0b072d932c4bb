"""Server settings and the ``stepgraph.json`` / ``langgraph.json`` config file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "ServerSettings", "find_config", "load_settings"]

CONFIG_NAMES = ("stepgraph.json", "langgraph.json")


class ConfigError(Exception):
    """The config file is missing or malformed, or a graph cannot be loaded."""


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
    ``max_body_bytes`` / ``max_json_depth`` bound each request (``None``: the environment's
    ``HTTP_MAX_REQUEST_BODY_BYTES`` / ``STEPGRAPH_MAX_JSON_DEPTH``, else 10 MiB / 64 levels).
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
    max_body_bytes: int | None = None
    max_json_depth: int | None = None

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
    """Read ``path`` (a ``stepgraph.json`` or ``langgraph.json``) into ``ServerSettings``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    graphs = data.get("graphs")
    if not isinstance(graphs, dict) or not graphs:
        raise ConfigError(f'{path}: "graphs" must be a non-empty object of id -> "./file.py:variable"')
    graphs = dict(graphs)
    for gid, ref in graphs.items():
        if isinstance(ref, dict) and isinstance(ref.get("path"), str):
            ref = graphs[gid] = ref["path"]  # {"path": ..., "description": ...} form
        if not isinstance(ref, str) or ":" not in ref:
            raise ConfigError(f'{path}: graph {gid!r} must be "./file.py:variable", got {ref!r}')
    base = path.resolve().parent
    settings = ServerSettings(graphs=graphs, base_dir=base, config_path=path.resolve(),
                              env=_read_env(data.get("env"), base))
    for key, value in overrides.items():
        if value is not None:
            setattr(settings, key, value)
    return settings


def _read_env(env: Any, base: Path) -> dict[str, str]:
    """The ``env`` key: an object of variables, or the path of a ``.env`` file."""
    if env is None:
        return {}
    if isinstance(env, dict):
        return {str(k): str(v) for k, v in env.items()}
    if isinstance(env, str):
        file = base / env
        if not file.is_file():
            return {}
        out: dict[str, str] = {}
        for line in file.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, _, value = line.removeprefix("export ").partition("=")
            out[key.strip()] = value.strip().strip("'\"")
        return out
    raise ConfigError('"env" must be an object or the path of a .env file')


def apply_env(env: dict[str, str]) -> None:
    """Set variables from the config's ``env`` that the environment does not already set."""
    for key, value in env.items():
        os.environ.setdefault(key, value)
