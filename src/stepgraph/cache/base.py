"""``BaseCache``: where node and task results are kept for ``CachePolicy``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

ValueT = TypeVar("ValueT")
Namespace = tuple[str, ...]
FullKey = tuple[Namespace, str]

__all__ = ["BaseCache", "FullKey", "Namespace"]


class BaseCache(ABC, Generic[ValueT]):
    """A key-value cache with per-entry TTL (seconds), grouped by namespace.

    ``get`` returns only the keys found and not expired; ``set`` stores ``(value, ttl)``
    pairs (``ttl=None``: forever); ``clear`` drops whole namespaces (all when ``None``).
    Values are stored serialized, so a cached result never aliases live state.
    """

    async_calls_sync = True
    """Its async methods (unless a subclass overrides them) only call the sync ones, inline:
    an ``ainvoke`` whose nodes are all sync may run on one worker thread
    (``engine/driver_thread.py``)."""

    def __init__(self, *, serde: Any = None) -> None:
        if serde is None:
            serde = JsonPlusSerializer()
        self.serde = serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The cached values of ``keys`` that exist and have not expired."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store each ``key: (value, ttl_seconds)``."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop the given namespaces, or everything."""

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)
