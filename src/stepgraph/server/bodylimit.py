"""A limit on request body size, answered with 413 before the body is buffered.

A declared ``Content-Length`` over the limit is refused at once, without reading the body;
a body sent without one (chunked) is counted as it arrives and refused as soon as it passes
the limit. Pure ASGI, so streaming responses pass through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

from stepgraph.server.codes import BODY_TOO_LARGE, coded
from stepgraph.server.limits import BODY_BYTES_ENV

__all__ = ["BodyLimitMiddleware", "BodyTooLarge"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(HTTPException):
    """The request body passed the limit (answered 413 by the app's HTTP error handler)."""

    def __init__(self, limit: int, size: int | None = None) -> None:
        got = f"{size} bytes" if size is not None else f"more than {limit} bytes"
        super().__init__(413, coded(BODY_TOO_LARGE, f"Request body too large: {got}, the limit is {limit} bytes.",
                                    f"Send less data per request, or raise the limit with {BODY_BYTES_ENV}."))


class BodyLimitMiddleware:
    """Refuses request bodies larger than ``max_bytes`` with 413."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send, int(declared))
            return
        seen = 0
        limit = self.max_bytes

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        from stepgraph.server.errors import json_response

        exc = BodyTooLarge(self.max_bytes, size)
        response = json_response({"detail": exc.detail}, 413, {"connection": "close"})
        await response(scope, receive, send)
