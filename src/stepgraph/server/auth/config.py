"""The ``auth`` key of ``langgraph.json`` / ``stepgraph.json``, checked at start-up.

::

    "auth": {
      "path": "./auth.py:auth",          # a langgraph_sdk.Auth instance (required)
      "disable_studio_auth": false,      # see below
      "openapi": {"securitySchemes": {...}, "security": [...], "paths": {...}},
      "cache": {"cache_keys": ["authorization"], "ttl_seconds": 60, "max_size": 1000}
    }

``disable_studio_auth``: LangGraph's dev server (``langgraph dev``) lets LangSmith Studio in
without credentials when a request carries ``x-auth-scheme: langsmith`` (the user is a
``StudioUser``, still subject to the ``@auth.on`` handlers); ``stepgraph dev`` does the
same unless this is ``true``. ``stepgraph serve`` has no LangSmith to check Studio's
credentials with, so there every request goes to ``@auth.authenticate``.
``allow_langsmith_api_keys: true`` needs LangSmith and is refused; any other key is
refused with its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AuthCache", "AuthConfig", "parse_auth_config"]

_KEYS = ("path", "disable_studio_auth", "openapi", "cache", "allow_langsmith_api_keys")


@dataclass(frozen=True)
class AuthCache:
    """``auth.cache``: successful authentications reused for ``ttl_seconds`` per header values."""

    cache_keys: tuple[str, ...]
    ttl_seconds: float = 60.0
    max_size: int = 1000


@dataclass(frozen=True)
class AuthConfig:
    """The checked ``auth`` section."""

    path: str
    disable_studio_auth: bool = False
    openapi: dict[str, Any] | None = None
    cache: AuthCache | None = None


def _error(message: str) -> Exception:
    from stepgraph.server.settings import ConfigError

    return ConfigError(f'"auth": {message}')


def _check_path(path: Any, base: Path) -> str:
    if not isinstance(path, str) or ":" not in path:
        raise _error(f'"path" must be "./file.py:name" or "package.module:name", got {path!r}')
    target, _, attr = path.rpartition(":")
    if not target or not attr:
        raise _error(f'"path" must be "./file.py:name" or "package.module:name", got {path!r}')
    if target.endswith(".py") or "/" in target or "\\" in target:
        file = (base / target).resolve()
        if not file.is_file():
            raise _error(f'"path" names {target}, which does not exist ({file})')
    return path


def _cache(raw: Any) -> AuthCache | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _error('"cache" must be an object with "cache_keys", "ttl_seconds", "max_size"')
    unknown = sorted(set(raw) - {"cache_keys", "ttl_seconds", "max_size"})
    if unknown:
        raise _error(f'"cache" has unknown key(s) {unknown}')
    keys = raw.get("cache_keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise _error('"cache.cache_keys" must be a non-empty list of header names')
    ttl = raw.get("ttl_seconds", 60)
    size = raw.get("max_size", 1000)
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
        raise _error('"cache.ttl_seconds" must be a positive number')
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise _error('"cache.max_size" must be a positive integer')
    return AuthCache(tuple(k.lower() for k in keys), float(ttl), size)


def _openapi(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _error('"openapi" must be an object ({"securitySchemes", "security", "paths"})')
    unknown = sorted(set(raw) - {"securitySchemes", "security_schemes", "security", "paths"})
    if unknown:
        raise _error(f'"openapi" has unknown key(s) {unknown}')
    schemes = raw.get("securitySchemes", raw.get("security_schemes"))
    if schemes is not None and not isinstance(schemes, dict):
        raise _error('"openapi.securitySchemes" must be an object')
    if raw.get("security") is not None and not isinstance(raw["security"], list):
        raise _error('"openapi.security" must be a list of security requirements')
    paths = raw.get("paths")
    if paths is not None and (not isinstance(paths, dict) or not all(isinstance(m, dict) for m in paths.values())):
        raise _error('"openapi.paths" must map a path to {method: security requirements}')
    return raw


def parse_auth_config(raw: Any, base: Path) -> AuthConfig | None:
    """The checked ``auth`` section (``None`` when absent); ``ConfigError`` names what is wrong."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _error('expected an object such as {"path": "./auth.py:auth"}')
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise _error(f"unknown key(s) {unknown}; supported: {', '.join(_KEYS)}")
    if raw.get("allow_langsmith_api_keys"):
        raise _error('"allow_langsmith_api_keys" needs LangSmith to check API keys, which stepgraph '
                     "does not use; authenticate those clients in your @auth.authenticate handler")
    if "path" not in raw:
        raise _error('"path" is required (the Auth object, e.g. "./auth.py:auth")')
    studio = raw.get("disable_studio_auth", False)
    if not isinstance(studio, bool):
        raise _error('"disable_studio_auth" must be true or false')
    return AuthConfig(path=_check_path(raw["path"], base), disable_studio_auth=studio,
                      openapi=_openapi(raw.get("openapi")), cache=_cache(raw.get("cache")))
