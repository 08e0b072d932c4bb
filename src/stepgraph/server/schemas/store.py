"""The long-term store: request bodies, query parameters and responses."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from stepgraph.server.request_limits import MAX_LABEL_LENGTH, MAX_LABELS, MAX_PAGE, MAX_TTL_MINUTES
from stepgraph.server.schemas.fields import (
    JsonObject,
    Label,
    Namespace,
    NamespacePrefix,
    Offset,
    QueryModel,
    RequestModel,
    ResponseModel,
    SafeStr,
    StoreKey,
    expected,
)

__all__ = [
    "GetItemQuery",
    "Item",
    "NamespacesResponse",
    "SearchItem",
    "SearchItemsResponse",
    "StoreDelete",
    "StoreListNamespaces",
    "StorePut",
    "StoreSearch",
]

Minutes = Annotated[float, Field(gt=0, le=MAX_TTL_MINUTES, allow_inf_nan=False,
                                 description="Minutes the item lives after its last write (or read).")]
StorePage = Annotated[int, Field(ge=0, le=MAX_PAGE)]
Index = Annotated[Literal[False] | list[SafeStr], expected("false or a list of field paths")]


class StorePut(RequestModel):
    """``PUT /store/items``: store ``value`` at ``(namespace, key)``."""

    namespace: Namespace
    key: StoreKey
    value: JsonObject
    index: Index | None = None
    ttl: Minutes | None = None


class StoreDelete(RequestModel):
    """``DELETE /store/items``."""

    namespace: NamespacePrefix | None = None
    key: StoreKey


class StoreSearch(RequestModel):
    """``POST /store/items/search``."""

    namespace_prefix: NamespacePrefix | None = None
    filter: JsonObject | None = None
    limit: StorePage | None = None
    offset: Offset | None = None
    query: Annotated[str, Field(max_length=65536)] | None = None
    refresh_ttl: bool | None = None


class StoreListNamespaces(RequestModel):
    """``POST /store/namespaces``."""

    prefix: NamespacePrefix | None = None
    suffix: NamespacePrefix | None = None
    max_depth: Annotated[int, Field(ge=1, le=MAX_LABELS)] | None = None
    limit: StorePage | None = None
    offset: Offset | None = None


_LABELS: Any = None


def _split_dots(value: str) -> tuple[str, ...]:
    global _LABELS
    if _LABELS is None:
        from pydantic import TypeAdapter

        _LABELS = TypeAdapter(Annotated[list[Label], Field(max_length=MAX_LABELS)])
    return tuple(_LABELS.validate_python(value.split("."))) if value else ()


DottedNamespace = Annotated[str, Field(max_length=MAX_LABELS * (MAX_LABEL_LENGTH + 1),
                                       description="The namespace's labels joined with '.'."),
                            AfterValidator(_split_dots)]


class GetItemQuery(QueryModel):
    """``GET /store/items?key=&namespace=a.b&refresh_ttl=`` (the namespace dot-joined)."""

    key: StoreKey
    namespace: DottedNamespace = ""
    refresh_ttl: bool | None = None


class Item(ResponseModel):
    """A stored item."""

    namespace: list[str]
    key: str
    value: JsonObject
    created_at: datetime
    updated_at: datetime


class SearchItem(Item):
    """A found item, with its relevance ``score`` when a query ranked it."""

    score: float | None = None


class SearchItemsResponse(ResponseModel):
    """``{"items": [...]}``."""

    items: list[SearchItem]


class NamespacesResponse(ResponseModel):
    """``{"namespaces": [[...], ...]}``."""

    namespaces: list[list[str]]
