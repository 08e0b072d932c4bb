"""Helpers shared by the route modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from stepgraph.server.errors import ApiError

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["PAGINATION", "RUN_LOCATION", "ctx_of", "engine_errors", "no_content", "url_path"]

PAGINATION = (("X-Pagination-Total", "How many items match in all."),
              ("X-Pagination-Next", "The offset of the next page, when there is one."))
"""The response headers of the search endpoints."""
RUN_LOCATION = (("Location", "Where to reconnect to (or join) the run."),
                ("Content-Location", "The run's own path."))
"""The response headers of the endpoints that create or follow a run."""


def ctx_of(request: Request) -> ServerContext:
    """The server context of the app handling ``request``."""
    return request.app.state.ctx


def url_path(*segments: str) -> str:
    """``/a/b/c`` from path segments, each percent-encoded (ids may hold any printable text,
    a header value may not)."""
    return "".join("/" + quote(str(seg), safe="") for seg in segments)


def no_content(status: int = 204) -> Response:
    """An empty response."""
    return Response(status_code=status)


@contextmanager
def engine_errors(status: int = 400) -> Iterator[None]:
    """Turn the engine's rejections of a request (bad node, bad values...) into HTTP errors."""
    from stepgraph.errors import StepgraphError

    try:
        yield
    except ApiError:
        raise
    except (StepgraphError, ValueError, KeyError, TypeError) as exc:
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        raise ApiError(status, f"{type(exc).__name__}: {message}") from None
