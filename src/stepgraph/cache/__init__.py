"""Caches for ``CachePolicy``: ``InMemoryCache`` and ``SqliteCache``."""

from stepgraph.cache.base import BaseCache

__all__ = ["BaseCache"]
