"""The long-term store: put, get, delete, search items; list namespaces."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, no_content
from stepgraph.server.validation import opt_dict, opt_int, opt_str, read_body, req_str

__all__ = ["ROUTES"]


def _namespace(value: Any, name: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if value is None and allow_empty:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or (not value and not allow_empty):
        raise ApiError(422, f"Invalid '{name}': expected a list of strings.")
    if any("." in v or not v for v in value):
        raise ApiError(422, f"Invalid '{name}': labels must be non-empty and must not contain '.'.")
    return tuple(value)


def _item(item: Any) -> dict[str, Any]:
    out = item.dict() if hasattr(item, "dict") else dict(item)
    if hasattr(item, "score"):
        out["score"] = item.score
    return out


def _store_errors(exc: Exception) -> ApiError:
    return ApiError(422, f"{type(exc).__name__}: {exc}")


async def put_item(request: Request) -> Response:
    """Store ``value`` at ``(namespace, key)`` (``index``, ``ttl`` in minutes)."""
    ctx = ctx_of(request)
    body = await read_body(request)
    namespace = _namespace(body.get("namespace"), "namespace")
    key = req_str(body, "key")
    value = opt_dict(body, "value")
    if value is None:
        raise ApiError(422, "Field 'value' is required and must be an object.")
    index = body.get("index")
    if index is not None and index is not False and not isinstance(index, list):
        raise ApiError(422, "Invalid 'index': expected false or a list of field paths.")
    kwargs: dict[str, Any] = {}
    if body.get("ttl") is not None:
        kwargs["ttl"] = body["ttl"]
    try:
        await ctx.backend.store.aput(namespace, key, value, index, **kwargs)
    except (ValueError, NotImplementedError, TypeError) as exc:
        raise _store_errors(exc) from None
    return no_content()


async def get_item(request: Request) -> Response:
    """The item (JSON ``null`` when missing); ``namespace`` is dot-joined in the query."""
    ctx = ctx_of(request)
    key = request.query_params.get("key")
    if not key:
        raise ApiError(422, "Query parameter 'key' is required.")
    raw = request.query_params.get("namespace") or ""
    namespace = tuple(raw.split(".")) if raw else ()
    refresh = request.query_params.get("refresh_ttl")
    try:
        item = await ctx.backend.store.aget(
            namespace, key, refresh_ttl=None if refresh is None else refresh.lower() == "true")
    except ValueError as exc:
        raise _store_errors(exc) from None
    return json_response(None if item is None else _item(item))


async def delete_item(request: Request) -> Response:
    """Delete the item at ``(namespace, key)``."""
    ctx = ctx_of(request)
    body = await read_body(request)
    namespace = _namespace(body.get("namespace"), "namespace", allow_empty=True)
    key = req_str(body, "key")
    try:
        await ctx.backend.store.adelete(namespace, key)
    except ValueError as exc:
        raise _store_errors(exc) from None
    return no_content()


async def search_items(request: Request) -> Response:
    """Items under ``namespace_prefix`` matching ``filter`` (ranked by ``query`` with an index)."""
    ctx = ctx_of(request)
    body = await read_body(request)
    prefix = _namespace(body.get("namespace_prefix"), "namespace_prefix", allow_empty=True)
    try:
        items = await ctx.backend.store.asearch(
            prefix, query=opt_str(body, "query"), filter=opt_dict(body, "filter"),
            limit=opt_int(body, "limit", 10, lo=0), offset=opt_int(body, "offset", 0),
            refresh_ttl=body.get("refresh_ttl") if isinstance(body.get("refresh_ttl"), bool) else None)
    except (ValueError, NotImplementedError) as exc:
        raise _store_errors(exc) from None
    return json_response({"items": [_item(i) for i in items]})


async def list_namespaces(request: Request) -> Response:
    """Namespaces holding items (``prefix``, ``suffix``, ``max_depth``, ``limit``, ``offset``)."""
    ctx = ctx_of(request)
    body = await read_body(request)
    prefix = _namespace(body.get("prefix"), "prefix", allow_empty=True) if body.get("prefix") else None
    suffix = _namespace(body.get("suffix"), "suffix", allow_empty=True) if body.get("suffix") else None
    max_depth = body.get("max_depth")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1):
        raise ApiError(422, "Invalid 'max_depth': expected a positive integer.")
    try:
        found = await ctx.backend.store.alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth,
            limit=opt_int(body, "limit", 100, lo=0), offset=opt_int(body, "offset", 0))
    except ValueError as exc:
        raise _store_errors(exc) from None
    return json_response({"namespaces": [list(ns) for ns in found]})


ROUTES = [
    Route("/store/items", put_item, methods=["PUT"]),
    Route("/store/items", get_item, methods=["GET"]),
    Route("/store/items", delete_item, methods=["DELETE"]),
    Route("/store/items/search", search_items, methods=["POST"]),
    Route("/store/namespaces", list_namespaces, methods=["POST"]),
]
