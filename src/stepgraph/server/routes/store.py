"""The long-term store: put, get, delete, search items; list namespaces."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import ctx_of, no_content
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

__all__ = ["ROUTES"]


def _item(item: Any) -> dict[str, Any]:
    out = item.dict() if hasattr(item, "dict") else dict(item)
    if hasattr(item, "score"):
        out["score"] = item.score
    return out


def _store_errors(exc: Exception) -> ApiError:
    return ApiError(422, f"{type(exc).__name__}: {exc}")


@operation(body=StorePut, status=204)
async def put_item(request: Request, body: StorePut) -> Response:
    """Store ``value`` at ``(namespace, key)`` (``index``, ``ttl`` in minutes)."""
    ctx = ctx_of(request)
    kwargs: dict[str, Any] = {}
    if body.ttl is not None:
        kwargs["ttl"] = body.ttl
    try:
        await ctx.backend.store.aput(tuple(body.namespace), body.key, body.value, body.index, **kwargs)
    except (ValueError, NotImplementedError, TypeError) as exc:
        raise _store_errors(exc) from None
    return no_content()


@operation(query=GetItemQuery, ok=Item | None)
async def get_item(request: Request, query: GetItemQuery) -> Response:
    """The item (JSON ``null`` when missing); ``namespace`` is dot-joined in the query."""
    ctx = ctx_of(request)
    try:
        item = await ctx.backend.store.aget(tuple(query.namespace), query.key, refresh_ttl=query.refresh_ttl)
    except ValueError as exc:
        raise _store_errors(exc) from None
    return json_response(None if item is None else _item(item))


@operation(body=StoreDelete, status=204)
async def delete_item(request: Request, body: StoreDelete) -> Response:
    """Delete the item at ``(namespace, key)``."""
    ctx = ctx_of(request)
    try:
        await ctx.backend.store.adelete(tuple(body.namespace or ()), body.key)
    except ValueError as exc:
        raise _store_errors(exc) from None
    return no_content()


@operation(body=StoreSearch, ok=SearchItemsResponse)
async def search_items(request: Request, body: StoreSearch) -> Response:
    """Items under ``namespace_prefix`` matching ``filter`` (ranked by ``query`` with an index)."""
    ctx = ctx_of(request)
    try:
        items = await ctx.backend.store.asearch(
            tuple(body.namespace_prefix or ()), query=body.query, filter=body.filter,
            limit=10 if body.limit is None else body.limit, offset=body.offset or 0,
            refresh_ttl=body.refresh_ttl)
    except (ValueError, NotImplementedError) as exc:
        raise _store_errors(exc) from None
    return json_response({"items": [_item(i) for i in items]})


@operation(body=StoreListNamespaces, ok=NamespacesResponse)
async def list_namespaces(request: Request, body: StoreListNamespaces) -> Response:
    """Namespaces holding items (``prefix``, ``suffix``, ``max_depth``, ``limit``, ``offset``)."""
    ctx = ctx_of(request)
    try:
        found = await ctx.backend.store.alist_namespaces(
            prefix=tuple(body.prefix) if body.prefix else None, suffix=tuple(body.suffix) if body.suffix else None,
            max_depth=body.max_depth, limit=100 if body.limit is None else body.limit, offset=body.offset or 0)
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
