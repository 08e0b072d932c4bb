"""``Authorizer``: a loaded ``langgraph_sdk.Auth`` object, run as LangGraph's server runs it.

* ``authenticate(scope, ...)`` calls the ``@auth.authenticate`` handler with the
  parameters it names (``request``, ``headers``, ``authorization``, ``path``, ``method``,
  ``path_params``, ``query_params``, ``body``, ``scope``, ``scopes``, ``user``); a sync
  handler runs in a worker thread.
* ``dispatch(user, permissions, resource, action, value)`` calls the most specific
  authorization handler: ``(resource, action)``, then ``(resource, "*")``, then
  ``("*", action)``, then ``("*", "*")``, then the global ``@auth.on`` (none: allowed).
  ``None``/``True`` allow, ``False`` is 403, a dict is a filter (``filters.parse_filter``),
  ``Auth.exceptions.HTTPException`` is its status, an ``AssertionError`` is 403.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from stepgraph.server.auth.config import AuthConfig
from stepgraph.server.auth.filters import parse_filter
from stepgraph.server.errors import ApiError
from stepgraph.server.storage.filters import AccessFilter

__all__ = ["AUTH_PARAMETERS", "Authorizer", "RequestAuth", "load_authorizer"]

logger = logging.getLogger("stepgraph.server")

AUTH_PARAMETERS = ("request", "body", "user", "path", "method", "scopes", "path_params",
                   "query_params", "headers", "authorization", "scope")
"""The parameters an ``@auth.authenticate`` handler may declare (injected by name)."""
RESOURCES = {
    "threads": ("create", "read", "update", "delete", "search", "create_run"),
    "assistants": ("create", "read", "update", "delete", "search"),
    "crons": ("create", "read", "update", "delete", "search"),
    "store": ("put", "get", "search", "delete", "list_namespaces"),
}


def _config_error(message: str) -> Exception:
    from stepgraph.server.settings import ConfigError

    return ConfigError(f'"auth": {message}')


def _wanted_params(fn: Callable[..., Any], path: str) -> frozenset[str]:
    sig = inspect.signature(fn)
    unsupported = [n for n, p in sig.parameters.items()
                   if n not in AUTH_PARAMETERS and p.default is p.empty
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if unsupported:
        raise _config_error(f"the @auth.authenticate handler of {path} has unsupported required "
                            f"parameter(s) {unsupported}; supported: {', '.join(AUTH_PARAMETERS)}")
    return frozenset(n for n in sig.parameters if n in AUTH_PARAMETERS)


@dataclass
class Authorizer:
    """The ``Auth`` object of ``auth.path`` with what the server needs to call it."""

    auth: Any
    config: AuthConfig
    params: frozenset[str]
    studio: bool = False
    """Let ``x-auth-scheme: langsmith`` requests in as ``StudioUser`` (``stepgraph dev``)."""
    _cache: dict[tuple[str, str], Any] = field(default_factory=dict)

    def handler(self, resource: str, action: str) -> Any:
        """The authorization handler for ``(resource, action)``, or ``None``."""
        key = (resource, action)
        if key not in self._cache:
            found = None
            handlers = self.auth._handlers
            for k in (key, (resource, "*"), ("*", action), ("*", "*")):
                if k in handlers and handlers[k]:
                    found = handlers[k][-1]
                    break
            if found is None and self.auth._global_handlers:
                found = self.auth._global_handlers[-1]
            self._cache[key] = found
        return self._cache[key]

    async def call_authenticate(self, kwargs: dict[str, Any]) -> Any:
        fn = self.auth._authenticate_handler
        if inspect.iscoroutinefunction(fn):
            return await fn(**kwargs)
        result = await run_in_threadpool(fn, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def dispatch(self, user: Any, permissions: list[str], resource: str, action: str,
                       value: Any) -> AccessFilter | None:
        """Run the handler of ``(resource, action)``; the filter it returned (``None``: none)."""
        from langgraph_sdk import Auth

        fn = self.handler(resource, action)
        if fn is None:
            return None
        ctx = Auth.types.AuthContext(user=user, permissions=list(permissions), resource=resource,
                                     action=action)
        try:
            result = await fn(ctx=ctx, value=value)
        except Auth.exceptions.HTTPException as exc:
            raise HTTPException(exc.status_code, exc.detail, dict(exc.headers or {}) or None) from None
        except AssertionError as exc:
            raise ApiError(403, str(exc) or "Forbidden") from None
        if result is None or result is True:
            return None
        if result is False:
            raise ApiError(403, "Forbidden")
        if not isinstance(result, dict):
            raise ApiError(500, f"The auth handler for {resource}.{action} returned {type(result).__name__}; "
                                "expected None, True, False or a filter dict.")
        return parse_filter(result)


@dataclass
class RequestAuth:
    """Who sent a request: its user and permissions, and the authorizer to ask."""

    authorizer: Authorizer
    user: Any
    permissions: list[str]

    @property
    def identity(self) -> str:
        return self.user.identity

    async def check(self, resource: str, action: str, value: Any) -> AccessFilter | None:
        """Ask the handler of ``(resource, action)`` about ``value`` (which it may change)."""
        return await self.authorizer.dispatch(self.user, self.permissions, resource, action, value)


def _warn_uncovered(auth: Any, path: str) -> None:
    handlers = auth._handlers
    if auth._global_handlers or ("*", "*") in handlers:
        return
    if not handlers:
        logger.warning("auth %s has no @auth.on handler: authenticated users can read and change "
                       "every thread, assistant and store item", path)
        return
    missing = sorted(f"{r}.{a}" for r, actions in RESOURCES.items() for a in actions
                     if (r, a) not in handlers and (r, "*") not in handlers and ("*", a) not in handlers)
    if missing:
        logger.warning("auth %s: no authorization handler for %s; those requests are allowed for any "
                       "authenticated user (add a default-deny @auth.on handler to refuse them)",
                       path, ", ".join(missing))


def load_authorizer(config: AuthConfig, base_dir: Path, *, dev: bool = False) -> Authorizer:
    """Import ``config.path`` and check it names an ``Auth`` with an authenticate handler."""
    from stepgraph.server.graphs import import_target
    from stepgraph.server.settings import ConfigError

    try:
        from langgraph_sdk import Auth
    except ImportError:  # pragma: no cover - the server extra installs it
        raise _config_error("custom auth needs the langgraph-sdk package (pip install 'stepgraph[server]')") from None
    target, _, name = config.path.rpartition(":")
    try:
        module = import_target(target, base_dir)
    except ConfigError as exc:
        raise _config_error(f"{config.path}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import
        raise _config_error(f"importing {target} failed: {type(exc).__name__}: {exc}") from exc
    obj = getattr(module, name, None)
    if obj is None:
        raise _config_error(f"{target} has no attribute {name!r} (path {config.path})")
    if not isinstance(obj, Auth):
        raise _config_error(f"{config.path} is a {type(obj).__name__}, not a langgraph_sdk.Auth instance "
                            "(create it with `auth = Auth()`)")
    if obj._authenticate_handler is None:
        raise _config_error(f"the Auth object at {config.path} has no @auth.authenticate handler")
    params = _wanted_params(obj._authenticate_handler, config.path)
    _warn_uncovered(obj, config.path)
    return Authorizer(obj, config, params, studio=dev and not config.disable_studio_auth)
