"""Small thread-safe LRU maps bounded by the bytes of their entries (the savers' memories).

Everything a saver remembers (list tips, row tips, packed rows, pieces, thread keys) is a
cache or a hint: a miss costs a snapshot, a full row or a query, never a wrong read. Each
cache gets a share of one byte budget per saver: ``STEPGRAPH_SAVER_CACHE_BYTES`` (default
``DEFAULT_CACHE_BYTES``; ``8MiB``-style sizes accepted), split by ``SHARES``. An entry
costs the bytes of its encoded form (what is or was stored) plus ``ENTRY_OVERHEAD``.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = [
    "CACHE_BYTES_ENV",
    "DEFAULT_CACHE_BYTES",
    "ENTRY_OVERHEAD",
    "SHARES",
    "Lru",
    "cache_budgets",
    "parse_bytes",
]

DEFAULT_CACHE_BYTES = 96 << 20
CACHE_BYTES_ENV = "STEPGRAPH_SAVER_CACHE_BYTES"
ENTRY_OVERHEAD = 64
"""Bytes counted per entry beyond its encoded size (key, bookkeeping)."""
SHARES = {
    "lists": 26,
    "reads": 6,
    "pieces": 20,
    "decoded": 12,
    "rows": 12,
    "packed": 12,
    "stored_pieces": 8,
    "thread_keys": 4,
}
"""Percent of the budget each cache of a saver may use."""

_SIZE = re.compile(r"\s*(\d+)\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_bytes(text: str) -> int:
    """``"1048576"``, ``"512KiB"``, ``"8M"``, ``"1GB"`` (binary units) as a number of bytes."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (expected e.g. 1048576, 512KiB, 8MiB)")
    return int(match.group(1)) * _UNITS[(match.group(2) or "").lower()[:1]]


def cache_budgets(total: int | None = None) -> dict[str, int]:
    """The byte budget of each cache, out of ``total`` (default: the environment or
    ``DEFAULT_CACHE_BYTES``)."""
    if total is None:
        raw = os.environ.get(CACHE_BYTES_ENV, "").strip()
        try:
            total = parse_bytes(raw) if raw else DEFAULT_CACHE_BYTES
        except ValueError as exc:
            raise ValueError(f"{CACHE_BYTES_ENV}: {exc}") from None
    if total < 0:
        raise ValueError(f"a saver cache budget must be >= 0 bytes, got {total}")
    return {name: total * share // 100 for name, share in SHARES.items()}


class Lru:
    """A thread-safe LRU map bounded by the total cost of its entries (and optionally by
    their number); the least recently used entries go first."""

    def __init__(self, budget: int, max_items: int | None = None) -> None:
        self.budget = budget
        self.max_items = max_items
        self.spent = 0
        self.items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[0]

    def get_many(self, keys: Iterable[Any]) -> tuple[dict[Any, Any], list[Any]]:
        """``({key: value} of the keys held, [the others])``, under one lock (each hit becomes
        the most recently used, as with ``get``)."""
        found: dict[Any, Any] = {}
        missing: list[Any] = []
        with self.lock:
            items = self.items
            touch = items.move_to_end
            for key in keys:
                hit = items.get(key)
                if hit is None:
                    missing.append(key)
                else:
                    touch(key)
                    found[key] = hit[0]
        return found, missing

    def __contains__(self, key: Any) -> bool:
        with self.lock:
            return key in self.items

    def __len__(self) -> int:
        with self.lock:
            return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        """The keys, least recently used first (a snapshot)."""
        with self.lock:
            return iter(list(self.items))

    def put(self, key: Any, value: Any, cost: int) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.spent -= old[1]
            if cost > self.budget:
                return  # larger than the whole budget: not worth evicting everything for
            self.items[key] = (value, cost)
            self.spent += cost
            while self.items and (
                self.spent > self.budget
                or (self.max_items is not None and len(self.items) > self.max_items)
            ):
                self.spent -= self.items.popitem(last=False)[1][1]

    def pop(self, key: Any) -> Any:
        if key not in self.items:  # (one atomic dict lookup: the usual miss takes no lock)
            return None
        with self.lock:
            old = self.items.pop(key, None)
            if old is None:
                return None
            self.spent -= old[1]
            return old[0]

    def drop(self, match: Callable[[Any], bool]) -> None:
        with self.lock:
            for key in [k for k in self.items if match(k)]:
                self.spent -= self.items.pop(key)[1]
