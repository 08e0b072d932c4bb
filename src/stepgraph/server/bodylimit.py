"""A limit on request body size, answered with 413 before the body is buffered.

A declared ``Content-Length`` over the limit is refused before the app sees the request;
a body sent without one (chunked) is counted as it arrives and refused as soon as it passes
the limit. Nothing is buffered: before answering, the rest of the body is read and dropped
(up to ``DRAIN_BYTES``), because a server that closes a socket with unread data resets the
connection and the client never sees the 413. Pure ASGI, so streaming responses pass
through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

from stepgraph.server.codes import BODY_TOO_LARGE, coded
from stepgraph.server.errors import json_response
from stepgraph.server.request_limits import BODY_BYTES_ENV

__all__ = ["DRAIN_BYTES", "BodyLimitMiddleware", "BodyTooLarge"]

DRAIN_BYTES = 256 * 1024 * 1024
"""How much of a refused body is read (and dropped) so that the client gets the answer."""

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
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request" and not started:  # once answering, the body is moot
                seen += len(message.get("body", b""))
                if seen > limit:
                    if message.get("more_body", False):
                        await _drain(receive, DRAIN_BYTES)
                    raise BodyTooLarge(limit)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge as exc:
            # Routes read the body inside Starlette's error handling, which answers 413 itself;
            # a middleware that reads it first (auth's authenticate handler asking for the
            # body) is outside it, so its refusal is answered here.
            if started:
                raise
            response = json_response({"detail": exc.detail}, 413, {"connection": "close"})
            await response(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        if size <= DRAIN_BYTES:
            await _drain(receive, size)
        exc = BodyTooLarge(self.max_bytes, size)
        response = json_response({"detail": exc.detail}, 413, {"connection": "close"})
        await response(scope, receive, send)


async def _drain(receive: Receive, budget: int) -> None:
    """Read and drop the rest of a request body (at most ``budget`` bytes)."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return
