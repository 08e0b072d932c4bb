"""CORS for browser clients (``useStream``, ``@langchain/react``, agent-chat-ui).

Behaviour as observed on LangGraph's server (``docs/protocol/v3-thread-streaming.md`` §7):

* a preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) is answered
  ``200 OK`` (``text/plain``) on every path, allowing any origin, the methods below, the
  requested headers (echoed) and private-network access, cached for 10 minutes;
* every other response to a request with an ``Origin`` (JSON, SSE, errors alike) gets
  ``access-control-allow-origin: *`` and exposes ``x-pagination-total``,
  ``x-pagination-next`` and ``content-location`` (the JS SDK reads a new run's id from
  ``content-location``); all responses vary on ``Origin``.

A pure ASGI middleware, so streaming responses pass through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.datastructures import Headers, MutableHeaders

__all__ = ["ALLOW_METHODS", "EXPOSE_HEADERS", "CORSMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ALLOW_METHODS = "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, QUERY"
EXPOSE_HEADERS = "x-pagination-total, x-pagination-next, content-location"
PREFLIGHT_VARY = ("Origin, Access-Control-Request-Method, Access-Control-Request-Headers, "
                  "Access-Control-Request-Private-Network")


class CORSMiddleware:
    """Answers preflights and adds CORS headers to every response."""

    def __init__(self, app: ASGIApp, *, allow_methods: str = ALLOW_METHODS,
                 expose_headers: str = EXPOSE_HEADERS, max_age: int = 600) -> None:
        self.app = app
        self.allow_methods = allow_methods
        self.expose_headers = expose_headers
        self.max_age = max_age

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if scope["method"] == "OPTIONS" and origin is not None and "access-control-request-method" in headers:
            await self._preflight(headers, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                if origin is not None:
                    out["access-control-allow-origin"] = "*"
                    out["access-control-expose-headers"] = self.expose_headers
                out.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(self, headers: Headers, send: Send) -> None:
        body = b"OK"
        out = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"access-control-allow-origin", b"*"),
            (b"access-control-allow-methods", self.allow_methods.encode()),
            (b"access-control-max-age", str(self.max_age).encode()),
            (b"access-control-allow-private-network", b"true"),
            (b"vary", PREFLIGHT_VARY.encode()),
        ]
        requested = headers.get("access-control-request-headers")
        if requested:
            out.append((b"access-control-allow-headers", requested.encode("latin-1")))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body", "body": body})
