"""A small thread-safe LRU map bounded by a cost per entry (the SQL savers' memories)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["Lru"]


class Lru:
    """A small thread-safe LRU map bounded by a cost per entry."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
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

    def put(self, key: Any, value: Any, cost: int) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.spent -= old[1]
            self.items[key] = (value, cost)
            self.spent += cost
            while self.spent > self.budget and self.items:
                self.spent -= self.items.popitem(last=False)[1][1]

    def drop(self, match: Callable[[Any], bool]) -> None:
        with self.lock:
            for key in [k for k in self.items if match(k)]:
                self.spent -= self.items.pop(key)[1]
