"""The long-term store: put, get, delete, search items; list namespaces."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize, request_auth, store_filter
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, no_content
from stepgraph.server.validation import opt_dict, opt_int, opt_str, read_body, req_str

__all__ = ["ROUTES"]

logger = logging.getLogger("stepgraph.server")


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


async def _authorized(request: Request, action: str, event: dict[str, Any]) -> bool:
    """Run the ``store.<action>`` handler on ``event`` (it may rewrite the namespace); whether
    the server has auth (and so ``event`` must be re-read).

    As on LangGraph, only searches apply a filter a handler returns; for the other actions
    it is not applied, which is logged (once per action) rather than passed over silently.
    """
    if request_auth(request) is None:
        return False
    if await authorize(request, "store", action, event) is not None and action not in _WARNED:
        _WARNED.add(action)
        logger.warning("the auth handler for store.%s returned a filter; store filters apply to searches "
                       "only (rewrite value['namespace'] to scope %s)", action, action)
    return True


_WARNED: set[str] = set()


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
    event = {"namespace": namespace, "key": key, "value": value, "index": index, "ttl": body.get("ttl")}
    if await _authorized(request, "put", event):
        namespace, key = _namespace(list(event["namespace"]), "namespace"), event["key"]
        value, index = event["value"], event["index"]
    kwargs: dict[str, Any] = {}
    if event.get("ttl") is not None:
        kwargs["ttl"] = event["ttl"]
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
    event = {"namespace": namespace, "key": key,
             "refresh_ttl": None if refresh is None else refresh.lower() == "true"}
    if await _authorized(request, "get", event):
        namespace = _namespace(list(event["namespace"]), "namespace", allow_empty=True)
        key = event["key"]
    try:
        item = await ctx.backend.store.aget(namespace, key, refresh_ttl=event["refresh_ttl"])
    except ValueError as exc:
        raise _store_errors(exc) from None
    return json_response(None if item is None else _item(item))


async def delete_item(request: Request) -> Response:
    """Delete the item at ``(namespace, key)``."""
    ctx = ctx_of(request)
    body = await read_body(request)
    namespace = _namespace(body.get("namespace"), "namespace", allow_empty=True)
    key = req_str(body, "key")
    event = {"namespace": namespace, "key": key}
    if await _authorized(request, "delete", event):
        namespace = _namespace(list(event["namespace"]), "namespace", allow_empty=True)
        key = event["key"]
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
    event = {"namespace": prefix, "filter": opt_dict(body, "filter"), "limit": opt_int(body, "limit", 10, lo=0),
             "offset": opt_int(body, "offset", 0), "query": opt_str(body, "query"),
             "refresh_ttl": body.get("refresh_ttl") if isinstance(body.get("refresh_ttl"), bool) else None}
    access = await authorize(request, "store", "search", event)
    if request_auth(request) is not None:
        prefix = _namespace(list(event["namespace"] or ()), "namespace_prefix", allow_empty=True)
        event["filter"] = store_filter(event.get("filter"), access)
        if event["filter"] is None:  # the handler's filter and the client's cannot both hold
            return json_response({"items": []})
    try:
        items = await ctx.backend.store.asearch(
            prefix, query=event["query"], filter=event["filter"] or None,
            limit=event["limit"], offset=event["offset"], refresh_ttl=event["refresh_ttl"])
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
    event = {"namespace": prefix, "suffix": suffix, "max_depth": max_depth,
             "limit": opt_int(body, "limit", 100, lo=0), "offset": opt_int(body, "offset", 0)}
    if await _authorized(request, "list_namespaces", event):
        prefix = _namespace(list(event["namespace"]), "prefix", allow_empty=True) if event["namespace"] else None
        suffix = _namespace(list(event["suffix"]), "suffix", allow_empty=True) if event["suffix"] else None
    try:
        found = await ctx.backend.store.alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=event["max_depth"],
            limit=event["limit"], offset=event["offset"])
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
