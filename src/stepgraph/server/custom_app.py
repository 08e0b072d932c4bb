"""``http.app`` (a user's Starlette/FastAPI app beside the API) and ``http.mount_prefix``.

As on LangGraph's server, the user's routes come first: a request one of them matches
(path and method) goes to the user's app, even where an API route has the same path; a
path only the user's app knows answers its 405 for another method. The user's middleware
wraps every request (API routes too), inside auth with ``middleware_order: "auth_first"``
and outside it by default (``"middleware_first"``); auth applies to the user's routes only
with ``http.enable_custom_route_auth``. The user's app's lifespan runs inside the server's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

from stepgraph.server.config_errors import CONFIG_INVALID, ConfigError
from stepgraph.server.errors import json_response

__all__ = ["CustomRoutes", "PrefixMiddleware", "custom_route_matcher", "load_custom_app", "route_path"]


def load_custom_app(ref: str, base_dir: Path) -> Starlette:
    """The Starlette (or FastAPI) app at ``"./file.py:app"``; ``ConfigError`` otherwise."""
    from stepgraph.server.graphs import import_target

    target, _, attr = ref.rpartition(":")
    try:
        module = import_target(target, base_dir)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's module failing to import
        raise ConfigError(f"http.app: importing {target} failed: {type(exc).__name__}: {exc}") from exc
    app = getattr(module, attr, None)
    if app is None:
        raise ConfigError(f"http.app: {target} has no attribute {attr!r}", code=CONFIG_INVALID)
    if not isinstance(app, Starlette):
        raise ConfigError(f"http.app: {ref} is a {type(app).__name__}, not a Starlette or FastAPI app",
                          code=CONFIG_INVALID)
    return app


def route_path(scope: Scope) -> str:
    """The path routes match (without the ``root_path`` a mount prefix sets)."""
    path, root = scope["path"], scope.get("root_path") or ""
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root):] or "/"
    return path


class CustomRoutes(BaseRoute):
    """The routes of the user's app as one route, placed before the API's."""

    def __init__(self, app: Starlette) -> None:
        self.user_app = app
        handlers = {k: v for k, v in app.exception_handlers.items() if k not in (500, Exception)}
        self._inner = ExceptionMiddleware(app.router, handlers=handlers)
        self.path = ""

    def match(self, scope: Scope) -> Match:
        """How well the user's routes match ``scope`` (``FULL`` for path and method)."""
        if scope["type"] not in ("http", "websocket"):
            return Match.NONE
        best = Match.NONE
        for route in self.user_app.router.routes:
            found, _ = route.matches(scope)
            if found == Match.FULL:
                return Match.FULL
            if found == Match.PARTIAL:
                best = Match.PARTIAL
        return best

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        return self.match(scope), {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        return self.user_app.router.url_path_for(name, **path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = self.user_app
        await self._inner(scope, receive, send)


class PrefixMiddleware:
    """Serve everything under ``prefix`` (``http.mount_prefix``); other paths answer 404."""

    def __init__(self, app: Any, prefix: str) -> None:
        self.app, self.prefix = app, prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            path, prefix = scope["path"], self.prefix
            if path != prefix and not path.startswith(prefix + "/"):
                if scope["type"] == "http":
                    await json_response({"detail": "Not Found"}, 404)(scope, receive, send)
                return
            scope = {**scope, "root_path": (scope.get("root_path") or "") + prefix}
        await self.app(scope, receive, send)


def custom_route_matcher(routes: CustomRoutes) -> Any:
    """``scope -> bool``: whether a user route takes the request (auth then skips it)."""
    return lambda scope: routes.match(scope) == Match.FULL
