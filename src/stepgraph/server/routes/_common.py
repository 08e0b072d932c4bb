"""Helpers shared by the route modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from stepgraph.server.errors import ApiError

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["ctx_of", "engine_errors", "no_content"]


def ctx_of(request: Request) -> ServerContext:
    """The server context of the app handling ``request``."""
    return request.app.state.ctx


def no_content(status: int = 204) -> Response:
    """An empty response."""
    return Response(status_code=status)


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
