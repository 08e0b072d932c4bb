"""``InMemoryCache``: a process-local cache (thread-safe)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from stepgraph.cache.base import BaseCache, FullKey, Namespace

__all__ = ["InMemoryCache"]


class InMemoryCache(BaseCache[Any]):
    """Keeps serialized values in a dict: ``{namespace: {key: (blob, expires_at)}}``."""

    def __init__(self, *, serde: Any = None) -> None:
        super().__init__(serde=serde)
        self._data: dict[Namespace, dict[str, tuple[tuple[str, bytes], float | None]]] = {}
        self._lock = threading.Lock()

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        now = time.time()
        out: dict[FullKey, Any] = {}
        with self._lock:
            for ns, key in keys:
                entries = self._data.get(ns)
                if not entries or key not in entries:
                    continue
                blob, expires = entries[key]
                if expires is not None and expires <= now:
                    del entries[key]
                    continue
                out[(ns, key)] = self.serde.loads_typed(blob)
        return out

    def set(self, pairs: Mapping[FullKey, tuple[Any, int | None]]) -> None:
        now = time.time()
        with self._lock:
            for (ns, key), (value, ttl) in pairs.items():
                expires = now + ttl if ttl is not None else None
                self._data.setdefault(ns, {})[key] = (self.serde.dumps_typed(value), expires)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._data.clear()
            else:
                for ns in namespaces:
                    self._data.pop(tuple(ns), None)
