"""Reading requests into the declared models (422 with a coded message on anything malformed).

Bodies are decoded by ``jsonbody`` (depth, number range, UTF-8) and validated against a
model or type (``validate``); query strings against a ``QueryModel``; path parameters by
name (``PATH_PARAMS``: every ``{thread_id}`` in every route has the same rule). A failure
is ``ApiError(422)`` whose detail names each bad field, says what was wrong and ends with a
hint, e.g.::

    [SG543] Invalid request body: 'limit': Input should be less than or equal to 1000 (got 5000)
    Hint: The expected shape of every field is in GET /openapi.json.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Annotated, Any, get_args, get_origin

from pydantic import Field, TypeAdapter, ValidationError
from starlette.requests import ClientDisconnect, Request

from stepgraph.server.codes import INVALID_FIELD, INVALID_JSON, coded
from stepgraph.server.errors import ApiError
from stepgraph.server.jsonbody import decode_json
from stepgraph.server.request_limits import DEFAULT_JSON_DEPTH, MAX_NS_LENGTH
from stepgraph.server.schemas.fields import SAFE_TEXT, CheckpointId, Id, QueryModel, Uuid

__all__ = ["PATH_PARAMS", "check_path", "parse_query", "read_body", "read_json", "validate"]

NAMESPACE_PATH = Annotated[str, Field(min_length=1, max_length=MAX_NS_LENGTH, pattern=SAFE_TEXT)]
PATH_PARAMS: dict[str, Any] = {
    "thread_id": Id,
    "assistant_id": Id,
    "run_id": Uuid,
    "cron_id": Uuid,
    "checkpoint_id": Annotated[CheckpointId, Field(min_length=1)],
    "namespace": NAMESPACE_PATH,
}
"""The type of each path parameter, by name (one rule per name across all routes)."""

_WHERE = {"body": "request body", "query": "query parameter", "path": "path parameter"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DEFAULT_HINT = "The expected shape of every field is in GET /openapi.json."


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)) or value is None:
        return ""
    text = repr(value)
    return f" (got {text[:60]}{'...' if len(text) > 60 else ''})"


def _message(err: Mapping[str, Any]) -> tuple[str, str | None]:
    """The text and (when specific) the hint for one pydantic error."""
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if kind == "string_pattern_mismatch" and isinstance(value, str):
        found = _CONTROL.search(value)
        if found is not None:
            return (f"must not contain control characters (U+{ord(found.group()):04X} at index {found.start()})",
                    "Ids, keys and namespace labels are printable text: drop control characters "
                    "such as NUL, CR and LF.")
        if "." in value and "." in str(ctx.get("pattern", "")):
            return "must not contain '.'", "Namespace labels are joined with '.' in query strings."
    if kind == "string_too_long":
        return (f"is {len(value) if isinstance(value, str) else '?'} characters long, the limit is "
                f"{ctx.get('max_length')}", "Use a shorter id or key.")
    if kind == "extra_forbidden":
        return "is not an accepted key", "Remove the unknown key."
    if kind == "missing":
        return "is required", None
    return err.get("msg", "is invalid") + _shown(value), None


def format_errors(exc: ValidationError, where: str, name: str | None = None) -> str:
    """The coded ``detail`` for a failed validation of a ``where`` (body/query/path)."""
    parts: list[str] = []
    hint: str | None = None
    for err in exc.errors(include_url=False)[:10]:
        loc = (name,) if name is not None else tuple(err.get("loc", ()))
        field = _loc(loc)
        text, err_hint = _message(err)
        parts.append(f"'{field}': {text}" if field else text)
        hint = hint or err_hint
    if exc.error_count() > 10:
        parts.append(f"and {exc.error_count() - 10} more")
    return coded(INVALID_FIELD, f"Invalid {_WHERE[where]}: " + "; ".join(parts) + ".", hint or _DEFAULT_HINT)


def validate(tp: Any, data: Any, *, where: str = "body", name: str | None = None) -> Any:
    """``data`` validated as ``tp`` (a model or any type); ``ApiError`` 422 when it is not."""
    try:
        return _adapter(tp).validate_python(data)
    except ValidationError as exc:
        raise ApiError(422, format_errors(exc, where, name)) from None


def _max_depth(request: Request) -> int:
    limits = getattr(request.app.state, "request_limits", None)
    return limits.max_json_depth if limits is not None else DEFAULT_JSON_DEPTH


async def read_json(request: Request) -> Any:
    """The decoded JSON body, ``None`` when empty."""
    try:
        raw = await request.body()
    except ClientDisconnect:  # a malformed or cut-short body: the client hears nothing more
        raise ApiError(400, coded(INVALID_JSON, "The client disconnected before the request body ended.",
                                  "Send the whole body (a valid Content-Length or chunked encoding).")) from None
    if not raw.strip():
        return None
    return decode_json(raw, max_depth=_max_depth(request))


def _is_list(tp: Any) -> bool:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return get_origin(tp) is list


async def read_body(request: Request, tp: Any) -> Any:
    """The body validated as ``tp``; an empty body counts as ``{}`` (``[]`` for a list type)."""
    body = await read_json(request)
    is_list = _is_list(tp)
    if body is None:
        raw = await request.body()
        if not raw.strip():
            body = [] if is_list else {}
    if not isinstance(body, list if is_list else dict):
        kind = "array" if is_list else "object"
        raise ApiError(422, coded(INVALID_JSON, f"Request body must be a JSON {kind}, got {_json_type(body)}.",
                                  "Send the fields as one JSON object: {\"name\": value, ...}." if not is_list
                                  else "Send a JSON array of objects."))
    return validate(tp, body)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "an array" if isinstance(value, list) else "an object"


def parse_query(request: Request, model: type[QueryModel]) -> QueryModel:
    """The query string validated as ``model`` (empty values count as absent; list fields
    take every occurrence, comma-separated values split)."""
    params = request.query_params
    data: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if _is_list(info.annotation):
            values = [v for raw in params.getlist(name) for v in raw.split(",") if v]
            if values:
                data[name] = values
        else:
            value = params.get(name)
            if value is not None and value != "":
                data[name] = value
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ApiError(422, format_errors(exc, "query")) from None


def check_path(request: Request) -> None:
    """Validate every path parameter of ``request`` by its name."""
    for name, value in request.path_params.items():
        tp = PATH_PARAMS.get(name)
        if tp is not None:
            validate(tp, value, where="path", name=name)
