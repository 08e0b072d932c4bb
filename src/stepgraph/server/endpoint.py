"""``@operation(...)``: declare once what a route takes and answers.

The declaration drives both sides: the wrapper validates the path parameters (by name),
the query string (``query=``) and the JSON body (``body=``) and hands the handler the parsed
models; ``server.openapi`` documents the same models, statuses and media types::

    @operation(body=ThreadCreate, ok=Thread, errors=(409,))
    async def create_thread(request: Request, body: ThreadCreate) -> Response: ...
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stepgraph.server.schemas.fields import QueryModel
from stepgraph.server.validation import check_path, parse_query, read_body

__all__ = ["Operation", "operation", "spec_of"]

Handler = Callable[..., Awaitable[Response]]


@dataclass(frozen=True)
class Operation:
    """What one route takes and answers.

    ``body``: the type the JSON body is validated as (passed as ``body=``); ``body_doc``: a
    body the handler reads itself (documented only: protocol endpoints with their own error
    shapes). ``query``: the query model (passed as ``query=``). ``ok``/``status``/``media``:
    the success response (``ok=None``: no content). ``errors``: other statuses it may answer
    (400, 422 always, 413 with a body); ``error_models``: ``(status, type)`` pairs for error
    bodies that are not ``{"detail": ...}``. ``headers``: request headers it reads.
    ``alt_media``: ``(media type, JSON schema)`` pairs of other success bodies (chosen by a
    query parameter). ``path_doc``: ``(name, type)`` pairs documenting a path parameter more
    narrowly than its validation (the handler checks it, with LangGraph's own message).
    ``empty``: other success statuses answered without a body (MCP's 202 for a notification).
    """

    body: Any = None
    body_doc: Any = None
    query: type[QueryModel] | None = None
    ok: Any = None
    status: int = 200
    media: str = "application/json"
    errors: tuple[int, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    response_headers: tuple[tuple[str, str], ...] = ()
    error_models: tuple[tuple[int, Any], ...] = ()
    path_doc: tuple[tuple[str, Any], ...] = ()
    alt_media: tuple[tuple[str, dict[str, Any]], ...] = ()
    empty: tuple[int, ...] = ()


def operation(**declared: Any) -> Callable[[Handler], Handler]:
    """Declare a route handler's inputs and outputs (see ``Operation``)."""
    spec = Operation(**declared)

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def endpoint(request: Request) -> Response:
            check_path(request)
            kwargs: dict[str, Any] = {}
            if spec.query is not None:
                kwargs["query"] = parse_query(request, spec.query)
            if spec.body is not None:
                kwargs["body"] = await read_body(request, spec.body)
            return await handler(request, **kwargs)

        endpoint.__api__ = spec  # type: ignore[attr-defined]
        return endpoint

    return decorate


def spec_of(endpoint: Any) -> Operation | None:
    """The declaration of a route's endpoint (``None`` when it has none)."""
    return getattr(endpoint, "__api__", None)
