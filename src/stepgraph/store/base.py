"""The long-term memory store API, compatible with ``langgraph.store.base``.

A store keeps JSON-like ``dict`` values under ``(namespace, key)``; a namespace is a tuple of
string labels. ``BaseStore`` implements every convenience method (``get``, ``search``,
``put``, ``delete``, ``list_namespaces`` and their ``a*`` twins) on top of two abstract ones,
``batch`` and ``abatch``, which run a list of ``GetOp``/``SearchOp``/``PutOp``/
``ListNamespacesOp`` and return one result per op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from stepgraph.checkpoint.serde.types import register_type
from stepgraph.store._types import (
    NOT_PROVIDED,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespaceMatchType,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    StoreError,
    TTLConfig,
    validate_labels,
    validate_namespace,
)

__all__ = [
    "NOT_PROVIDED",
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespaceMatchType",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "StoreError",
    "TTLConfig",
    "validate_labels",
    "validate_namespace",
]


for _cls in (
    NotProvided, StoreError, InvalidNamespaceError, Item, SearchItem, GetOp, SearchOp, PutOp,
    MatchCondition, ListNamespacesOp, TTLConfig, IndexConfig,
):  # fmt: skip
    _cls.__module__ = __name__  # their public home (pickle, repr, docs)


# --- the public API ----------------------------------------------------------------------
class BaseStore(ABC):
    """A key-value store with hierarchical namespaces and optional semantic search.

    Subclasses implement ``batch`` and ``abatch``; ``supports_ttl`` says whether ``put``
    accepts ``ttl``, ``ttl_config`` holds the store's ``TTLConfig``.
    """

    supports_ttl: bool = False
    ttl_config: TTLConfig | None = None

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` and return their results, in order."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch``."""

    def _one(self, op: Op) -> Result:
        return self.batch([op])[0]

    async def _aone(self, op: Op) -> Result:
        return (await self.abatch([op]))[0]

    # Each public method builds its op once (``_*_op``); the sync and async twins only
    # differ in how they run it.
    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _get_op(self, namespace: tuple[str, ...], key: str, refresh_ttl: bool | None) -> GetOp:
        validate_labels(namespace)
        return GetOp(tuple(namespace), str(key), self._refresh(refresh_ttl))

    def _search_op(
        self, prefix: tuple[str, ...], query: str | None, filter: dict[str, Any] | None,
        limit: int, offset: int, refresh_ttl: bool | None,
    ) -> SearchOp:  # fmt: skip
        validate_labels(prefix)
        return SearchOp(tuple(prefix), filter, limit, offset, query, self._refresh(refresh_ttl))

    def _put_op(
        self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None,
        index: Literal[False] | list[str] | None, ttl: float | None | NotProvided,
    ) -> PutOp:  # fmt: skip
        validate_namespace(namespace)
        if ttl is NOT_PROVIDED:
            ttl = (self.ttl_config or {}).get("default_ttl")
        elif ttl is not None and not self.supports_ttl:
            raise NotImplementedError(
                f"TTL is not supported by {type(self).__name__}. "
                "Use a store implementation that supports TTL or set ttl=None."
            )
        return PutOp(tuple(namespace), str(key), value, index=index, ttl=ttl)  # type: ignore[arg-type]

    def _delete_op(self, namespace: tuple[str, ...], key: str) -> PutOp:
        validate_labels(namespace)
        return PutOp(tuple(namespace), str(key), None)

    @staticmethod
    def _list_op(
        prefix: NamespacePath | None, suffix: NamespacePath | None,
        max_depth: int | None, limit: int, offset: int,
    ) -> ListNamespacesOp:  # fmt: skip
        conditions = []
        for kind, path in (("prefix", prefix), ("suffix", suffix)):
            if path:
                validate_labels(path)
                conditions.append(MatchCondition(kind, tuple(path)))  # type: ignore[arg-type]
        return ListNamespacesOp(tuple(conditions), max_depth, limit, offset)

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item at ``(namespace, key)``, or ``None``; never creates the namespace."""
        return self._one(self._get_op(namespace, key, refresh_ttl))  # type: ignore[return-value]

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under ``namespace_prefix`` matching ``filter``; ranked when ``query`` is set."""
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return self._one(op)  # type: ignore[return-value]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Store ``value`` (``None`` deletes); ``ttl`` in minutes, default from ``ttl_config``."""
        self._one(self._put_op(namespace, key, value, index, ttl))

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the item (a no-op if it does not exist)."""
        self._one(self._delete_op(namespace, key))

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Sorted namespaces holding at least one item; ``"*"`` matches any one label."""
        return self._one(self._list_op(prefix, suffix, max_depth, limit, offset))  # type: ignore[return-value]

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async ``get``."""
        return await self._aone(self._get_op(namespace, key, refresh_ttl))  # type: ignore[return-value]

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async ``search``."""
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return await self._aone(op)  # type: ignore[return-value]

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Async ``put``."""
        await self._aone(self._put_op(namespace, key, value, index, ttl))

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async ``delete``."""
        await self._aone(self._delete_op(namespace, key))

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async ``list_namespaces``."""
        return await self._aone(self._list_op(prefix, suffix, max_depth, limit, offset))  # type: ignore[return-value]


def _register_serde() -> None:
    """Let checkpoints hold store items (state that carries search results, say)."""
    def encode(item: Item) -> dict[str, Any]:
        out = {
            "namespace": list(item.namespace), "key": item.key, "value": item.value,
            "created_at": item.created_at, "updated_at": item.updated_at,
        }
        if isinstance(item, SearchItem):
            out["score"] = item.score
        return out

    register_type(Item, encoder=encode, decoder=lambda d: Item(**{**d, "namespace": tuple(d["namespace"])}))
    register_type(SearchItem, encoder=encode,
                  decoder=lambda d: SearchItem(**{**d, "namespace": tuple(d["namespace"])}))


_register_serde()
