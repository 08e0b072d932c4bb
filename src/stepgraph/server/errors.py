"""HTTP errors: ``{"detail": ...}`` with the right status, never a stack trace."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from stepgraph.server.serde import dumps

__all__ = ["ApiError", "install_handlers", "json_response", "run_error_payload"]

logger = logging.getLogger("stepgraph.server")


class ApiError(Exception):
    """An error answered as ``{"detail": detail}`` with HTTP ``status``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def json_response(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """A JSON response encoded with the server's serializer."""
    return Response(dumps(obj, stream=False), status_code=status, headers=dict(headers or {}),
                    media_type="application/json")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return json_response({"detail": exc.detail}, exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code)
    return json_response({"detail": exc.detail}, exc.status_code, exc.headers)


async def _unhandled(request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error in %s %s", request.method, request.url.path)
    return json_response({"detail": f"Internal server error ({type(exc).__name__})"}, 500)


_STORED_DATA_CODES = frozenset({"SG414", "SG416", "SG417"})
"""SaverError codes that mean "the stored rows are inconsistent", not a server bug."""


async def _stored_data_error(request: Request, exc: Exception) -> Response:
    """A checkpoint the server cannot (or may not) decode: 422 with the stable code and hint,
    never a 500 (the blob may have been planted in the database; nothing of it was run)."""
    code = getattr(exc, "code", None)
    if not isinstance(code, str) or (
        not _is_serialization_error(exc) and code not in _STORED_DATA_CODES
    ):
        return await _unhandled(request, exc)
    logger.warning("refused stored data in %s %s: %s", request.method, request.url.path, exc)
    body = {"detail": str(exc), "code": code, "hint": getattr(exc, "hint", None)}
    return json_response(body, 422)


def _is_serialization_error(exc: Exception) -> bool:
    from stepgraph.checkpoint.serde.base import SerializationError

    return isinstance(exc, SerializationError)


def install_handlers() -> dict[Any, Any]:
    """Starlette ``exception_handlers`` for the app."""
    from stepgraph.checkpoint.base import SaverError
    from stepgraph.checkpoint.serde.base import SerializationError

    return {ApiError: _api_error, HTTPException: _http_error,
            SerializationError: _stored_data_error, SaverError: _stored_data_error,
            Exception: _unhandled}


_SHOWN = (ValueError, TypeError, KeyError, AttributeError, RuntimeError, RecursionError,
          TimeoutError, NotImplementedError, LookupError, ArithmeticError, AssertionError)


def run_error_payload(exc: BaseException) -> dict[str, str]:
    """The ``error`` event / ``__error__`` payload for an exception raised by a run.

    The message is kept for common user-facing exception types and stepgraph's own coded
    errors; anything else says only that an internal error occurred (no stack trace ever).
    """
    from stepgraph.errors import GraphBubbleUp, StepgraphError

    name = type(exc).__name__
    if isinstance(exc, (*_SHOWN, StepgraphError, GraphBubbleUp)):
        message = str(exc)
        if isinstance(exc, KeyError) and len(exc.args) == 1:
            message = repr(exc.args[0])
    else:
        message = "An internal error occurred"
    return {"error": name, "message": message}
