"""What the server does with each key of a parsed config: honour it, accept it as a build-time
key (with a log line), or refuse it with ``ConfigError`` naming the key, the reason and a hint.

Every key of ``config_schema.Config`` is decided here; ``decide(config, base, source)``
returns a ``Decided`` (the pieces ``ServerSettings`` needs plus the notes to log at start-up)
or raises one ``ConfigError`` listing every refused key. Paths are resolved against the
config file's folder and must exist.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stepgraph.server.config_errors import (
    CONFIG_INVALID,
    CONFIG_MISSING_PATH,
    CONFIG_UNSUPPORTED,
    ConfigError,
    Problem,
)
from stepgraph.server.config_http import HttpSettings, http_settings
from stepgraph.server.config_schema import (
    AuthConfig,
    Config,
    CorsConfig,
    GraphDef,
    HttpConfig,
    validation_problems,
)
from stepgraph.server.config_store import StoreSettings, store_settings
from stepgraph.server.config_webhooks import WebhookSettings, webhook_settings
from stepgraph.server.request_limits import MAX_TTL_MINUTES
from stepgraph.server.runtime.ttl import ThreadTtlPolicy

__all__ = ["Decided", "decide"]

_JS_SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".tsx", ".jsx")
_NOT_YET = "is not supported yet"
_BUILD_TOOLS = ("pip", "setuptools", "wheel")


@dataclass
class Decided:
    """The honoured parts of a config, ready for ``ServerSettings``."""

    graphs: dict[str, str]
    descriptions: dict[str, str] = field(default_factory=dict)
    dependencies: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cors: CorsConfig | None = None
    auth: AuthConfig | None = None
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    thread_ttl: ThreadTtlPolicy = field(default_factory=ThreadTtlPolicy)
    http: HttpSettings = field(default_factory=HttpSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    notes: list[str] = field(default_factory=list)


class _Checker:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.problems: list[Problem] = []
        self.notes: list[str] = []

    def refuse(self, key: str, reason: str, hint: str | None = None) -> None:
        self.problems.append(Problem(CONFIG_UNSUPPORTED, key, reason, hint))

    def invalid(self, key: str, reason: str, hint: str | None = None) -> None:
        self.problems.append(Problem(CONFIG_INVALID, key, reason, hint))

    def not_yet(self, key: str, what: str, hint: str) -> None:
        self.refuse(key, f"{what} {_NOT_YET}", hint)

    def path(self, key: str, value: str, *, kind: str = "file or folder") -> Path | None:
        """``value`` resolved against the config's folder, or a problem when it does not exist."""
        found = (self.base / value).resolve()
        if not found.exists():
            self.problems.append(Problem(CONFIG_MISSING_PATH, key, f"{kind} {value!r} does not exist "
                                         f"(looked for {found})", "paths are relative to the config file"))
            return None
        return found

    def build_time(self, key: str, value: Any, what: str) -> None:
        self.notes.append(f"config key `{key}` ({value!r}) is a build-time key ({what}); "
                          "it has no effect on `stepgraph serve`")


def _is_file_ref(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target or target.startswith(".")


def _check_ref(c: _Checker, key: str, ref: Any, what: str) -> str | None:
    """A ``"./file.py:attr"`` / ``"package.module:attr"`` reference; the file must exist."""
    if not isinstance(ref, str):
        c.invalid(key, f"expected a string \"./file.py:variable\", got {type(ref).__name__}")
        return None
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr:
        c.invalid(key, f"expected \"./file.py:variable\" or \"package.module:variable\", got {ref!r}")
        return None
    if target.endswith(_JS_SUFFIXES):
        c.refuse(key, f"{what} in JavaScript/TypeScript ({target}) are not supported: stepgraph hosts "
                      "Python graphs", "point it at a Python file, or serve it with LangGraph.js")
        return None
    if _is_file_ref(target) and c.path(key, target, kind="file") is None:
        return None
    return ref


def _graphs(c: _Checker, config: Config) -> tuple[dict[str, str], dict[str, str]]:
    graphs: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    if not config.graphs:
        c.invalid("graphs", "must name at least one graph", 'e.g. "graphs": {"agent": "./agent.py:graph"}')
    for gid, spec in config.graphs.items():
        key = f"graphs.{gid}"
        if not gid.strip():
            c.invalid(key, "a graph id must be a non-empty string")
            continue
        if isinstance(spec, dict):
            try:
                parsed = GraphDef.model_validate(spec)
            except ValidationError as exc:
                c.problems.extend(validation_problems(exc, GraphDef, ("graphs", gid)))
                continue
            ref = _check_ref(c, f"{key}.path", parsed.path, "graphs")
            if parsed.description:
                descriptions[gid] = parsed.description
        elif isinstance(spec, str):
            ref = _check_ref(c, key, spec, "graphs")
        else:
            c.invalid(key, f'expected "./file.py:variable" or {{"path": ..., "description": ...}}, '
                           f"got {type(spec).__name__}")
            continue
        if ref is not None:
            graphs[gid] = ref
    return graphs, descriptions


def _dependencies(c: _Checker, deps: list[str]) -> list[Path]:
    """Local folders go on ``sys.path`` (as ``langgraph dev`` does); packages must be installed."""
    paths: list[Path] = []
    for i, dep in enumerate(deps):
        key = f"dependencies[{i}]"
        if dep.startswith((".", "/")):
            found = c.path(key, dep)
            if found is not None and found.is_dir():
                paths.append(found)
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", dep)
        if match is None or "://" in dep or dep.startswith("git+"):
            c.notes.append(f"config key `{key}` ({dep!r}) is installed into Docker images by "
                           "`langgraph build`; `stepgraph serve` installs nothing: install it yourself")
            continue
        try:
            importlib.metadata.distribution(match.group(0))
        except importlib.metadata.PackageNotFoundError:
            c.notes.append(f"config key `{key}`: package {match.group(0)!r} is not installed in this "
                           f"environment ({sys.prefix}); `stepgraph serve` installs nothing: "
                           f"pip install {dep!r}")
    return paths


def _env(c: _Checker, env: Any) -> dict[str, str]:
    if env is None:
        return {}
    if isinstance(env, dict):
        out: dict[str, str] = {}
        for name, value in env.items():
            if not isinstance(value, str):
                c.invalid(f"env.{name}", f"expected a string, got {type(value).__name__} {value!r}",
                          f'quote it: "{name}": "{value}"')
            else:
                out[name] = value
        return out
    if isinstance(env, str):
        file = c.path("env", env, kind="env file")
        if file is None:
            return {}
        if not file.is_file():
            c.invalid("env", f"{env!r} is a folder, not a .env file")
            return {}
        from dotenv import dotenv_values

        try:
            values = dotenv_values(file)
        except (OSError, UnicodeDecodeError) as exc:
            c.invalid("env", f"cannot read {file}: {exc}")
            return {}
        return {k: v for k, v in values.items() if v is not None}
    c.invalid("env", f"expected an object of variables or the path of a .env file, got {type(env).__name__}")
    return {}


def _build_keys(c: _Checker, config: Config) -> None:
    """Keys that only shape the Docker image ``langgraph build`` makes."""
    if config.python_version is not None:
        m = re.fullmatch(r"(\d+)\.(\d+)(?:-\w+)?", config.python_version)
        if m is None:
            c.invalid("python_version", f"expected 'major.minor' such as '3.11', got {config.python_version!r}")
        elif (int(m.group(1)), int(m.group(2))) < (3, 11):
            c.invalid("python_version", f"{config.python_version} is below the minimum 3.11")
        else:
            running = f"{sys.version_info.major}.{sys.version_info.minor}"
            c.build_time("python_version", config.python_version,
                         f"the Python of the image; this server runs on Python {running}")
    if config.api_version is not None:
        if re.fullmatch(r"(~=|>~=)?\s*\d+(\.\d+){0,2}[0-9A-Za-z.]*", config.api_version) is None:
            c.invalid("api_version", f"expected a version such as '0.8', got {config.api_version!r}")
        else:
            c.build_time("api_version", config.api_version, "the langgraph-api image version")
    for key, what in (("internal_docker_tag", "an internal image tag"), ("base_image", "the image to build on"),
                      ("image_distro", "the Linux distribution of the image"),
                      ("pip_installer", "the installer used while building the image")):
        value = getattr(config, key)
        if value is not None:
            name = "_INTERNAL_docker_tag" if key == "internal_docker_tag" else key
            c.build_time(name, value, what)
    if config.pip_config_file is not None and c.path("pip_config_file", config.pip_config_file, kind="file"):
        c.build_time("pip_config_file", config.pip_config_file, "pip settings used while building the image")
    if config.dockerfile_lines:
        c.build_time("dockerfile_lines", f"{len(config.dockerfile_lines)} line(s)", "appended to the Dockerfile")
    tools = config.keep_pkg_tools
    if tools is not None:
        if not (isinstance(tools, bool) or (isinstance(tools, list) and all(t in _BUILD_TOOLS for t in tools))):
            c.invalid("keep_pkg_tools", f"expected true/false or a list of {', '.join(_BUILD_TOOLS)}, got {tools!r}")
        else:
            c.build_time("keep_pkg_tools", tools, "packaging tools kept in the image")
    if config.source is not None:
        if config.dependencies:
            c.invalid("source", "cannot be combined with `dependencies` (a uv project lists its own)",
                      "remove `dependencies`")
        root = c.path("source.root", config.source.root or ".", kind="folder")
        if root is not None:
            for needed in ("pyproject.toml", "uv.lock"):
                if not (root / needed).is_file():
                    c.problems.append(Problem(CONFIG_MISSING_PATH, "source.root", f"{root} has no {needed}",
                                              "source.kind 'uv' needs a uv project (uv lock)"))
            c.build_time("source", config.source.kind, "the uv project installed into the image")


def _refused_top_level(c: _Checker, config: Config) -> None:
    if config.node_version is not None:
        c.refuse("node_version", "JavaScript graphs are not supported: stepgraph hosts Python graphs",
                 "remove node_version (it selects the Node.js of LangGraph.js images)")
    if config.ui is not None:
        c.refuse("ui", "generative UI components (JS/TS bundles served under /ui) are not supported",
                 "remove `ui`")
    if config.ui_config is not None:
        c.refuse("ui_config", "generative UI components are not supported", "remove `ui_config`")
    if config.encryption is not None:
        c.refuse("encryption", "custom at-rest encryption handlers are not supported",
                 "remove `encryption` and encrypt the database's storage instead")
    for key in ("project_root", "package"):
        if getattr(config, key) is not None:
            c.refuse(key, "is no longer supported (LangGraph's CLI refuses it too)",
                     f"use source.{'root' if key == 'project_root' else 'package'}")


def _checkpointer(c: _Checker, config: Config) -> None:
    cp = config.checkpointer
    if cp is None:
        return
    if cp.backend in ("custom", "mongo") or cp.path is not None or cp.uri is not None:
        key = "checkpointer.path" if cp.path is not None else "checkpointer.backend"
        c.refuse(key, "a custom checkpointer is not supported",
                 "remove it: the server's saver is SQLite, or PostgreSQL with --database-url")
    if cp.ttl is not None:
        _thread_ttl(c, cp.ttl)
    serde = cp.serde
    if serde is None:
        return
    for key in ("allowed_json_modules", "allowed_msgpack_modules"):
        value = getattr(serde, key)
        if value is True:
            c.refuse(f"checkpointer.serde.{key}", "allowing every module is refused: a stored blob never "
                     "decides which code runs", "list the exact types to allow instead")
        elif value:
            c.not_yet(f"checkpointer.serde.{key}", "registering decodable types from the config",
                      "register your types with the serializer in code")
    if serde.pickle_fallback:
        c.refuse("checkpointer.serde.pickle_fallback", "stepgraph never unpickles checkpoint data",
                 "set it to false or remove it")


def _http(c: _Checker, http: HttpConfig) -> None:
    """The keys ``config_http`` does not decide."""
    if http.disable_ui is True:
        c.notes.append("config key `http.disable_ui`: stepgraph serves no generative UI; the studio (/ui) is off")
    elif http.disable_ui is False:
        c.not_yet("http.disable_ui", "generative UI (/ui)", "remove http.disable_ui")
    logging_rules = http.logging_headers
    if logging_rules is not None:
        if logging_rules.includes or logging_rules.include:
            c.refuse("http.logging_headers", "stepgraph never logs request headers, so none can be included",
                     "remove `includes`")
        else:
            c.notes.append("config key `http.logging_headers`: stepgraph never logs request headers")
    if http.cors is not None and http.cors.allow_origin_regex is not None:
        try:
            re.compile(http.cors.allow_origin_regex)
        except re.error as exc:
            c.invalid("http.cors.allow_origin_regex", f"not a valid regular expression: {exc}")


def _thread_ttl(c: _Checker, ttl: Any) -> None:
    """``checkpointer.ttl`` is honoured (``runtime/ttl.py``); its numbers must make sense."""
    if ttl.default_ttl is not None and not 0 < ttl.default_ttl <= MAX_TTL_MINUTES:
        c.invalid("checkpointer.ttl.default_ttl", f"must be a number of minutes in (0, {MAX_TTL_MINUTES:g}]")
    if ttl.sweep_interval_minutes is not None and ttl.sweep_interval_minutes < 1:
        c.invalid("checkpointer.ttl.sweep_interval_minutes", "must be at least 1 minute")
    if ttl.sweep_limit is not None and ttl.sweep_limit < 1:
        c.invalid("checkpointer.ttl.sweep_limit", "must be at least 1")


def _auth(c: _Checker, auth: AuthConfig) -> None:
    """Shape only: enforcement (and the checks of the Auth object itself) live in ``server/auth``."""
    _check_ref(c, "auth.path", auth.path, "auth handlers")
    if auth.allow_langsmith_api_keys:
        c.refuse("auth.allow_langsmith_api_keys", "LangSmith API keys need LangSmith, which stepgraph does not use",
                 "authenticate those clients in your @auth.authenticate handler")
    if auth.cache is not None and not auth.cache.cache_keys:
        c.invalid("auth.cache.cache_keys", "the cache needs the header names that identify a caller",
                  'e.g. "cache_keys": ["authorization"]')


def decide(config: Config, base: Path, source: str, environ: Mapping[str, str]) -> Decided:
    """Decide every key of ``config`` (file ``source`` in folder ``base``)."""
    c = _Checker(base)
    graphs, descriptions = _graphs(c, config)
    deps = _dependencies(c, config.dependencies or [])
    env = _env(c, config.env)
    _build_keys(c, config)
    _refused_top_level(c, config)
    _checkpointer(c, config)
    store = store_settings(c, config.store, _check_ref)
    http = http_settings(c, config.http, _check_ref)
    if config.http is not None:
        _http(c, config.http)
    if config.auth is not None:
        _auth(c, config.auth)
    webhooks = webhook_settings(config.webhooks, config.http, {**env, **environ}, c.problems)
    if c.problems:
        raise ConfigError.from_problems(source, c.problems)
    return Decided(graphs=graphs, descriptions=descriptions, dependencies=deps, env=env,
                   cors=config.http.cors if config.http else None, auth=config.auth,
                   webhooks=webhooks, notes=c.notes, http=http, store=store,
                   thread_ttl=ThreadTtlPolicy.from_config(config.checkpointer.ttl if config.checkpointer else None))
