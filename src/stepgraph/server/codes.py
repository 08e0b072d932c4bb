"""The coded errors of the HTTP layer: bad JSON, bad fields, oversized bodies.

Every such answer is LangGraph's error body ``{"detail": "..."}`` with the detail in
stepgraph's coded form (``[SGnnn] what was wrong`` and a ``Hint:`` line), so clients that read
``detail`` (both SDKs) show the whole message.
"""

from __future__ import annotations

from stepgraph.errors import format_error

__all__ = ["BODY_TOO_LARGE", "INVALID_FIELD", "INVALID_JSON", "JSON_TOO_DEEP", "NUMBER_RANGE", "coded"]

INVALID_JSON = "SG540"
"""The body is not JSON (syntax, invalid UTF-8, NaN/Infinity literals)."""
JSON_TOO_DEEP = "SG541"
"""The body's JSON nests deeper than the server's limit."""
NUMBER_RANGE = "SG542"
"""A JSON number that cannot be stored exactly (integer outside 64 bits, float overflow)."""
INVALID_FIELD = "SG543"
"""A body field, query or path parameter has the wrong type, is out of range or missing."""
BODY_TOO_LARGE = "SG544"
"""The body is larger than the server's limit (HTTP 413)."""


def coded(code: str, what: str, hint: str | None = None) -> str:
    """The ``detail`` of a coded error."""
    return format_error(code, what, hint)
