"""Helpers shared by the route modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from stepgraph.server.auth import authorize
from stepgraph.server.errors import ApiError

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["PAGINATION", "RUN_LOCATION", "ctx_of", "engine_errors", "no_content", "run_for", "thread_for",
           "url_path"]

PAGINATION = (("X-Pagination-Total", "How many items match in all."),
              ("X-Pagination-Next", "The offset of the next page, when there is one."))
"""The response headers of the search endpoints."""
RUN_LOCATION = (("Location", "Where to reconnect to (or join) the run."),
                ("Content-Location", "The run's own path."))
"""The response headers of the endpoints that create or follow a run."""


def ctx_of(request: Request) -> ServerContext:
    """The server context of the app handling ``request``."""
    return request.app.state.ctx


def configurable_headers(request: Request) -> dict[str, str] | None:
    """The request headers ``http.configurable_headers`` copies into a run's ``configurable``."""
    patterns = ctx_of(request).settings.http.configurable_headers
    if patterns is None:
        return None
    return patterns.select((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.scope.get("headers") or ())


def url_path(*segments: str) -> str:
    """``/a/b/c`` from path segments, each percent-encoded (ids may hold any printable text,
    a header value may not)."""
    return "".join("/" + quote(str(seg), safe="") for seg in segments)


def no_content(status: int = 204) -> Response:
    """An empty response."""
    return Response(status_code=status)


async def thread_for(request: Request, event: str, thread_id: str, /, **value: Any) -> dict[str, Any]:
    """The thread, after the ``threads.<event>`` auth handler (404 when missing or not visible)."""
    access = await authorize(request, "threads", event, {"thread_id": thread_id, **value})
    return await ctx_of(request).threads.get(thread_id, access)


async def run_for(request: Request, event: str, thread_id: str | None, run_id: str, /,
                  **value: Any) -> dict[str, Any]:
    """The run (of ``thread_id`` when given), after the ``threads.<event>`` auth handler on its
    thread: 404 when the run is missing or its thread is not visible."""
    ctx = ctx_of(request)
    if thread_id is not None:
        await thread_for(request, event, thread_id, run_id=run_id, **value)
        return await ctx.runs.get(thread_id, run_id)
    run = await ctx.runs.get(None, run_id)
    access = await authorize(request, "threads", event, {"thread_id": run["thread_id"], "run_id": run_id, **value})
    if access is not None and await ctx.threads.find(run["thread_id"], access) is None:
        raise ApiError(404, f"Run {run_id} not found")
    return run


@contextmanager
def engine_errors(status: int = 400) -> Iterator[None]:
    """Turn the engine's rejections of a request (bad node, bad values...) into HTTP errors."""
    from stepgraph.checkpoint.base import SaverError
    from stepgraph.checkpoint.serde.base import SerializationError
    from stepgraph.errors import StepgraphError

    try:
        yield
    except (ApiError, SerializationError):
        raise  # stored data that cannot be decoded: 422 with its code (errors.py)
    except SaverError as exc:
        if exc.code in ("SG414", "SG416", "SG417"):
            raise
        message = str(exc)
        raise ApiError(status, f"{type(exc).__name__}: {message}") from None
    except (StepgraphError, ValueError, KeyError, TypeError) as exc:
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        raise ApiError(status, f"{type(exc).__name__}: {message}") from None
