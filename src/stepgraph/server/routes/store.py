"""The long-term store: put, get, delete, search items; list namespaces."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize, request_auth, store_filter
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, no_content
from stepgraph.server.schemas.fields import NamespacePrefix, StoreKey
from stepgraph.server.schemas.store import (
    GetItemQuery,
    Item,
    NamespacesResponse,
    SearchItemsResponse,
    StoreDelete,
    StoreListNamespaces,
    StorePut,
    StoreSearch,
)
from stepgraph.server.validation import validate

__all__ = ["ROUTES"]

logger = logging.getLogger("stepgraph.server")


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


def _namespace(event: dict[str, Any], name: str = "namespace") -> tuple[str, ...]:
    """The namespace (or prefix) an auth handler left in ``event[name]``, checked as a client's would be."""
    return tuple(validate(NamespacePrefix, list(event.get(name) or ()), name=name))


def _key(event: dict[str, Any]) -> str:
    return validate(StoreKey, event.get("key"), name="key")


def _store_errors(exc: Exception) -> ApiError:
    return ApiError(422, f"{type(exc).__name__}: {exc}")


@operation(body=StorePut, status=204)
async def put_item(request: Request, body: StorePut) -> Response:
    """Store ``value`` at ``(namespace, key)`` (``index``, ``ttl`` in minutes)."""
    ctx = ctx_of(request)
    namespace, key, value, index = tuple(body.namespace), body.key, body.value, body.index
    event = {"namespace": namespace, "key": key, "value": value, "index": index, "ttl": body.ttl}
    ttl = body.ttl
    if await _authorized(request, "put", event):  # what the handler left is checked as a client's body
        checked = validate(StorePut, {**event, "namespace": list(event.get("namespace") or ())})
        namespace, key, value, index, ttl = (tuple(checked.namespace), checked.key, checked.value,
                                             checked.index, checked.ttl)
    kwargs: dict[str, Any] = {}
    if ttl is not None:
        kwargs["ttl"] = ttl
    try:
        await ctx.backend.store.aput(namespace, key, value, index, **kwargs)
    except (ValueError, NotImplementedError, TypeError) as exc:
        raise _store_errors(exc) from None
    return no_content()


@operation(query=GetItemQuery, ok=Item | None)
async def get_item(request: Request, query: GetItemQuery) -> Response:
    """The item (JSON ``null`` when missing); ``namespace`` is dot-joined in the query."""
    ctx = ctx_of(request)
    namespace, key = tuple(query.namespace), query.key
    event = {"namespace": namespace, "key": key, "refresh_ttl": query.refresh_ttl}
    if await _authorized(request, "get", event):
        namespace, key = _namespace(event), _key(event)
    try:
        item = await ctx.backend.store.aget(namespace, key, refresh_ttl=query.refresh_ttl)
    except ValueError as exc:
        raise _store_errors(exc) from None
    return json_response(None if item is None else _item(item))


@operation(body=StoreDelete, status=204)
async def delete_item(request: Request, body: StoreDelete) -> Response:
    """Delete the item at ``(namespace, key)``."""
    ctx = ctx_of(request)
    namespace, key = tuple(body.namespace or ()), body.key
    event = {"namespace": namespace, "key": key}
    if await _authorized(request, "delete", event):
        namespace, key = _namespace(event), _key(event)
    try:
        await ctx.backend.store.adelete(namespace, key)
    except ValueError as exc:
        raise _store_errors(exc) from None
    return no_content()


@operation(body=StoreSearch, ok=SearchItemsResponse)
async def search_items(request: Request, body: StoreSearch) -> Response:
    """Items under ``namespace_prefix`` matching ``filter`` (ranked by ``query`` with an index)."""
    ctx = ctx_of(request)
    prefix = tuple(body.namespace_prefix or ())
    event = {"namespace": prefix, "filter": body.filter, "limit": 10 if body.limit is None else body.limit,
             "offset": body.offset or 0, "query": body.query, "refresh_ttl": body.refresh_ttl}
    access = await authorize(request, "store", "search", event)
    if request_auth(request) is not None:
        prefix = _namespace(event, "namespace")
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


@operation(body=StoreListNamespaces, ok=NamespacesResponse)
async def list_namespaces(request: Request, body: StoreListNamespaces) -> Response:
    """Namespaces holding items (``prefix``, ``suffix``, ``max_depth``, ``limit``, ``offset``)."""
    ctx = ctx_of(request)
    prefix = tuple(body.prefix) if body.prefix else None
    suffix = tuple(body.suffix) if body.suffix else None
    event = {"namespace": prefix, "suffix": suffix, "max_depth": body.max_depth,
             "limit": 100 if body.limit is None else body.limit, "offset": body.offset or 0}
    if await _authorized(request, "list_namespaces", event):
        prefix = _namespace(event) or None
        suffix = _namespace(event, "suffix") or None
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
