"""``InMemoryStore``: a dict-backed store, LangGraph's ``InMemoryStore`` with TTL support.

Unlike LangGraph's, reading a missing namespace does not create it, deleting the last item of
a namespace removes it from ``list_namespaces``, an update keeps ``created_at``, and values
are copied in and out (mutating a value never changes what is stored).
"""

from __future__ import annotations

import copy
import heapq
import itertools
import threading
from collections.abc import Iterator
from typing import Any

from stepgraph.store._core import BatchPlan, PlannedStore, Write
from stepgraph.store._query import Record, list_namespaces, rank
from stepgraph.store.base import GetOp, IndexConfig, Result, SearchOp, TTLConfig

__all__ = ["InMemoryStore"]

_SCALARS = (str, int, float, bool, type(None))


def clone(value: Any) -> Any:
    """A deep copy of a JSON-like value (fast path for dicts, lists and scalars)."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    if isinstance(value, _SCALARS):
        return value
    return copy.deepcopy(value)


class _MemRecord(Record):
    __slots__ = ()

    def public_value(self) -> dict[str, Any]:
        return clone(self.value)


class InMemoryStore(PlannedStore):
    """A store in process memory; thread-safe. See ``PlannedStore`` for ``index``/``ttl``."""

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None):
        super().__init__(index=index, ttl=ttl)
        self._data: dict[tuple[str, ...], dict[str, _MemRecord]] = {}
        self._expiring: set[tuple[tuple[str, ...], str]] = set()
        self._seq = itertools.count()
        self._lock = threading.RLock()

    def _execute(self, plan: BatchPlan) -> list[Result]:
        with self._lock:
            for i, op in plan.reads:
                if isinstance(op, GetOp):
                    plan.found(i, op, self._lookup(op.namespace, op.key, plan.now))
                elif isinstance(op, SearchOp):
                    records = self._under(op.namespace_prefix, plan.now)
                    plan.ranked(i, op, rank(op, records, plan.query_vector(op)))
                else:
                    plan.results[i] = list_namespaces(op, self._live_namespaces(plan.now))
            for write in plan.writes.values():
                self._apply(write, plan.now)
            if plan.sweep:
                plan.swept = self._sweep(plan.now)
        return plan.results

    # --- reads ---------------------------------------------------------------------------
    def _lookup(self, namespace: tuple[str, ...], key: str, now: int) -> _MemRecord | None:
        record = self._data.get(tuple(namespace), {}).get(str(key))
        return record if record is not None and record.live(now) else None

    def _under(self, prefix: tuple[str, ...], now: int) -> Iterator[_MemRecord]:
        """Live records whose namespace starts with ``prefix``, in insertion order."""
        prefix = tuple(prefix)
        n = len(prefix)
        groups = [items.values() for ns, items in self._data.items() if ns[:n] == prefix]
        merged = groups[0] if len(groups) == 1 else heapq.merge(*groups, key=_by_seq)
        return (r for r in merged if r.live(now))

    def _live_namespaces(self, now: int) -> Iterator[tuple[str, ...]]:
        return (ns for ns, items in self._data.items() if any(r.live(now) for r in items.values()))

    # --- writes --------------------------------------------------------------------------
    def _apply(self, w: Write, now: int) -> None:
        items = self._data.get(w.namespace)
        old = items.get(w.key) if items else None
        if old is not None and (w.value is None or not old.live(now)):
            self._remove(w.namespace, w.key)
            old = None
        if w.value is None:
            return
        if old is None:
            old = _MemRecord(w.namespace, w.key, {}, now, now, seq=next(self._seq))
            self._data.setdefault(w.namespace, {})[w.key] = old
        old.value = clone(w.value)
        old.updated, old.expires, old.ttl = now, w.expires, w.ttl
        old.vectors = [vec for _, vec in w.vectors]
        if w.expires is None:
            self._expiring.discard((w.namespace, w.key))
        else:
            self._expiring.add((w.namespace, w.key))

    def _remove(self, namespace: tuple[str, ...], key: str) -> None:
        items = self._data[namespace]
        del items[key]
        if not items:
            del self._data[namespace]
        self._expiring.discard((namespace, key))

    def _sweep(self, now: int) -> int:
        expired = [(ns, key) for ns, key in self._expiring if not self._data[ns][key].live(now)]
        for ns, key in expired:
            self._remove(ns, key)
        return len(expired)


def _by_seq(record: Record) -> int:
    return record.seq
