"""``AuthMiddleware``: every request except the public ones passes ``@auth.authenticate``.

Public, as on LangGraph's server: ``/``, ``/ok``, ``/info``, ``/metrics``, ``/docs`` and
``/openapi.json`` (CORS preflights are answered before this middleware). An accepted
request carries its ``RequestAuth`` in ``scope["stepgraph.auth"]`` (and Starlette's
``scope["user"]`` / ``scope["auth"]``); route handlers ask it through ``authorize``.
A refused one is answered ``{"detail": ...}`` with the handler's status (401 by default)
and headers, without reaching any route.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.authentication import AuthCredentials
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Match

from stepgraph.server.auth.authorizer import Authorizer, RequestAuth
from stepgraph.server.auth.users import StudioUser, normalize_auth_result
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.jsonbody import decode_json
from stepgraph.server.request_limits import DEFAULT_JSON_DEPTH

__all__ = ["PUBLIC_PATHS", "SCOPE_KEY", "AuthMiddleware"]

logger = logging.getLogger("stepgraph.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = frozenset({"/", "/ok", "/info", "/metrics", "/docs", "/openapi.json"})
SCOPE_KEY = "stepgraph.auth"
STUDIO_USER = "langgraph-studio-user"


class _Refused(Exception):
    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers


class _Cache:
    """Successful authentications by the values of the configured headers (LRU, with TTL)."""

    def __init__(self, keys: tuple[str, ...], ttl: float, size: int) -> None:
        self.keys, self.ttl, self.size = keys, ttl, size
        self._items: OrderedDict[tuple[Any, ...], tuple[float, Any, list[str]]] = OrderedDict()

    def key(self, scope: Scope) -> tuple[Any, ...] | None:
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers") or ()}
        values = tuple(headers.get(k.lower()) for k in self.keys)
        return None if all(v is None for v in values) else values

    def get(self, key: tuple[Any, ...]) -> tuple[Any, list[str]] | None:
        found = self._items.get(key)
        if found is None or found[0] < time.monotonic():
            self._items.pop(key, None)
            return None
        self._items.move_to_end(key)
        return found[1], found[2]

    def put(self, key: tuple[Any, ...], user: Any, permissions: list[str]) -> None:
        self._items[key] = (time.monotonic() + self.ttl, user, permissions)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


class AuthMiddleware:
    """Pure ASGI middleware: streaming responses pass through untouched."""

    def __init__(self, app: ASGIApp, *, authorizer: Authorizer,
                 skip: Callable[[Scope], bool] | None = None) -> None:
        self.app = app
        self.authorizer = authorizer
        self.skip = skip
        """Requests let through unauthenticated (the custom app's routes, without
        ``http.enable_custom_route_auth``)."""
        cache = authorizer.config.cache
        self.cache = _Cache(cache.cache_keys, cache.ttl_seconds, cache.max_size) if cache else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or _route_path(scope) in PUBLIC_PATHS
                or (self.skip is not None and self.skip(scope))):
            await self.app(scope, receive, send)
            return
        try:
            user, permissions, receive = await self._authenticate(scope, receive)
        except _Refused as exc:
            response = json_response({"detail": exc.detail}, exc.status, exc.headers)
            await response(scope, receive, send)
            return
        scope[SCOPE_KEY] = RequestAuth(self.authorizer, user, permissions)
        scope["user"] = user
        scope["auth"] = AuthCredentials(permissions)
        await self.app(scope, receive, send)

    async def _authenticate(self, scope: Scope, receive: Receive) -> tuple[Any, list[str], Receive]:
        headers = {k.lower(): v for k, v in scope.get("headers") or ()}
        if self.authorizer.studio and headers.get(b"x-auth-scheme") == b"langsmith":
            return StudioUser(STUDIO_USER), [], receive
        key = self.cache.key(scope) if self.cache is not None else None
        if key is not None and self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit[0], hit[1], receive
        kwargs, receive = await self._arguments(scope, receive)
        from langgraph_sdk import Auth

        try:
            result = await self.authorizer.call_authenticate(kwargs)
        except Auth.exceptions.HTTPException as exc:
            raise _Refused(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None) from None
        except HTTPException as exc:
            raise _Refused(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None) from None
        except Exception as exc:  # noqa: BLE001 - a failing handler refuses, never leaks a trace
            logger.exception("the @auth.authenticate handler failed on %s %s", scope.get("method"), scope["path"])
            raise _Refused(500, f"Authentication failed: the auth handler raised {type(exc).__name__}.") from None
        try:
            user, permissions = normalize_auth_result(result)
        except ValueError as exc:
            logger.error("the @auth.authenticate handler returned an invalid user: %s", exc)
            raise _Refused(500, f"Authentication failed: the auth handler returned an invalid user ({exc}).") from None
        if key is not None and self.cache is not None:
            self.cache.put(key, user, permissions)
        return user, permissions, receive

    async def _arguments(self, scope: Scope, receive: Receive) -> tuple[dict[str, Any], Receive]:
        want = self.authorizer.params
        out: dict[str, Any] = {}
        raw_headers = list(scope.get("headers") or ())
        if "body" in want:
            body, receive = await _read_body(receive)
            try:  # within the request limits, as the routes decode it (the route answers a bad body)
                out["body"] = decode_json(body, max_depth=_max_depth(scope)) if body.strip() else None
            except ApiError:
                out["body"] = None
        if "request" in want:
            out["request"] = Request(scope, receive)
        if "headers" in want:
            out["headers"] = {k.lower(): v for k, v in raw_headers}
        if "authorization" in want:
            value = next((v for k, v in raw_headers if k.lower() == b"authorization"), None)
            out["authorization"] = value.decode("latin-1") if value is not None else None
        if "path" in want:
            out["path"] = scope["path"]
        if "method" in want:
            out["method"] = scope["method"]
        if "path_params" in want:
            out["path_params"] = _path_params(scope)
        if "query_params" in want:
            out["query_params"] = QueryParams(scope.get("query_string") or b"")
        if "scope" in want:
            out["scope"] = scope
        if "scopes" in want:
            out["scopes"] = []
        if "user" in want:
            out["user"] = None
        return out, receive


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that hands it to the app again."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _route_path(scope: Scope) -> str:
    """The path without the ``root_path`` that ``http.mount_prefix`` sets."""
    path, root = scope["path"], scope.get("root_path") or ""
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root):] or "/"
    return path


def _max_depth(scope: Scope) -> int:
    limits = getattr(getattr(scope.get("app"), "state", None), "request_limits", None)
    return limits.max_json_depth if limits is not None else DEFAULT_JSON_DEPTH


def _path_params(scope: Scope) -> dict[str, Any]:
    """The path parameters of the route the request will reach (``{}`` when none matches)."""
    app = scope.get("app")
    for route in getattr(getattr(app, "router", None), "routes", None) or ():
        match, child = route.matches(scope)
        if match == Match.FULL:
            return dict(child.get("path_params") or {})
    return {}
