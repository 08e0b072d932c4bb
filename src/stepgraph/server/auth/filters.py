"""The filter an authorization handler returns, checked and turned into an ``AccessFilter``.

The language is LangGraph's (``langgraph_sdk.auth.types.FilterType``), applied to the
resource's ``metadata``:

* ``{"owner": "u1"}`` or ``{"owner": {"$eq": "u1"}}``: the key exists and equals the value;
* ``{"members": {"$contains": "u1"}}``: the key holds a list with that element;
  ``{"$contains": ["u1", "u2"]}``: with all of them;
* ``{"$or": [f1, f2, ...]}`` / ``{"$and": [...]}`` (at least two filters each), nested at
  most two levels deep; several keys in one filter must all hold.

Values are JSON scalars (or, for equality, a list of scalars). A filter outside this
language is the server's misconfiguration, answered 500 with what was wrong — never
ignored (LangGraph's in-memory server skips an unknown operator, which lets everything
through).
"""

from __future__ import annotations

from typing import Any

from stepgraph.server.errors import ApiError
from stepgraph.server.storage.filters import AccessFilter, AllOf, AnyOf, MetaContains, MetaEq

__all__ = ["MAX_NESTING", "parse_filter"]

MAX_NESTING = 2
_SCALARS = (str, int, float, bool, type(None))


def _bad(detail: str) -> ApiError:
    return ApiError(500, f"Your auth handler returned an invalid filter: {detail}")


def _scalar(value: Any, where: str) -> Any:
    if not isinstance(value, _SCALARS):
        raise _bad(f"{where} must be a string, number, boolean or null, got {type(value).__name__}.")
    return value


def _key_filter(key: str, value: Any) -> list[AccessFilter]:
    if isinstance(value, list):
        return [MetaEq(key, tuple(_scalar(v, f"an element of {key!r}") for v in value))]
    if not isinstance(value, dict):
        return [MetaEq(key, _scalar(value, repr(key)))]
    if not value:
        raise _bad(f"{key!r} has an empty operator object (use $eq or $contains).")
    out: list[AccessFilter] = []
    for op, operand in value.items():
        if op == "$eq":
            if isinstance(operand, list):
                out.append(MetaEq(key, tuple(_scalar(v, f"an element of {key!r}.$eq") for v in operand)))
            else:
                out.append(MetaEq(key, _scalar(operand, f"{key!r}.$eq")))
        elif op == "$contains":
            items = operand if isinstance(operand, list) else [operand]
            out.append(MetaContains(key, tuple(_scalar(v, f"{key!r}.$contains") for v in items)))
        else:
            raise _bad(f"unknown operator {op!r} for {key!r} (supported: $eq, $contains).")
    return out


def _parse(flt: Any, level: int) -> AccessFilter:
    if level > MAX_NESTING:
        raise _bad(f"$or/$and are nested more than {MAX_NESTING} levels deep.")
    if not isinstance(flt, dict):
        raise _bad(f"expected an object, got {type(flt).__name__}.")
    parts: list[AccessFilter] = []
    for key, value in flt.items():
        if not isinstance(key, str):
            raise _bad(f"keys must be strings, got {key!r}.")
        if key in ("$or", "$and"):
            if not isinstance(value, list) or len(value) < 2:
                raise _bad(f"{key} needs a list of at least 2 filters.")
            subs = tuple(_parse(v, level + 1) for v in value)
            parts.append(AnyOf(subs) if key == "$or" else AllOf(subs))
        elif key.startswith("$"):
            raise _bad(f"unknown operator {key!r} (supported at the top: $or, $and).")
        else:
            parts.extend(_key_filter(key, value))
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def parse_filter(flt: dict[str, Any]) -> AccessFilter | None:
    """The ``AccessFilter`` of a handler's filter dict (``None`` for ``{}``: no restriction)."""
    if not flt:
        return None
    return _parse(flt, 0)
