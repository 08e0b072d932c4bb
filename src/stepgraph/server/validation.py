"""Reading and checking request bodies and query strings (422 on anything malformed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from starlette.requests import Request

from stepgraph.server.errors import ApiError
from stepgraph.server.serde import loads

__all__ = [
    "opt_bool",
    "opt_dict",
    "opt_enum",
    "opt_int",
    "opt_str",
    "opt_str_list",
    "query_bool",
    "query_int",
    "read_body",
    "req_str",
]


async def read_body(request: Request, *, default: Any = None, kind: type = dict) -> Any:
    """The JSON body (``default`` when empty); 422 when it is not JSON of type ``kind``."""
    raw = await request.body()
    if not raw.strip():
        if default is not None:
            return default
        return kind()
    try:
        body = loads(raw)
    except ValueError:
        raise ApiError(422, "Request body is not valid JSON.") from None
    if body is None and default is not None:
        return default
    if not isinstance(body, kind):
        raise ApiError(422, f"Request body must be a JSON {'object' if kind is dict else 'array'}.")
    return body


def _bad(name: str, what: str) -> ApiError:
    return ApiError(422, f"Invalid '{name}': expected {what}.")


def req_str(body: Mapping[str, Any], name: str) -> str:
    """A required non-empty string field."""
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise ApiError(422, f"Field '{name}' is required and must be a non-empty string.")
    return value


def opt_str(body: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """An optional string field."""
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _bad(name, "a string")
    return value


def opt_dict(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """An optional object field."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _bad(name, "an object")
    return value


def opt_bool(body: Mapping[str, Any], name: str, default: bool = False) -> bool:
    """An optional boolean field."""
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _bad(name, "a boolean")
    return value


def opt_int(body: Mapping[str, Any], name: str, default: int, *, lo: int = 0, hi: int | None = None) -> int:
    """An optional integer field within ``[lo, hi]``."""
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        raise _bad(name, f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))
    return value


def opt_enum(body: Mapping[str, Any], name: str, choices: Iterable[str], default: str | None) -> str | None:
    """An optional field that must be one of ``choices``."""
    value = body.get(name)
    if value is None:
        return default
    allowed = tuple(choices)
    if value not in allowed:
        raise _bad(name, "one of " + ", ".join(repr(c) for c in allowed))
    return value


def opt_str_list(body: Mapping[str, Any], name: str, *, star: bool = False) -> list[str] | str | None:
    """An optional list of strings (or ``"*"`` when ``star``); a single string becomes a list."""
    value = body.get(name)
    if value is None:
        return None
    if star and value == "*":
        return "*"
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(name, "a list of strings" + (' or "*"' if star else ""))
    return value


def query_bool(request: Request, name: str, default: bool = False) -> bool:
    """A boolean query parameter (``true/false/1/0/yes/no``)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    low = raw.lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise _bad(name, "a boolean")


def query_int(request: Request, name: str, default: int, *, lo: int = 0, hi: int | None = None) -> int:
    """An integer query parameter within ``[lo, hi]``."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _bad(name, "an integer") from None
    if value < lo or (hi is not None and value > hi):
        raise _bad(name, f"an integer >= {lo}")
    return value
