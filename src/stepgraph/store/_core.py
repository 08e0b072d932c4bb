"""``PlannedStore``: batch preparation shared by every stepgraph store.

A batch becomes a ``BatchPlan``: ops are checked, puts deduplicated (the last put of a key
wins), the texts and queries to embed collected and embedded (the only step whose sync and
async versions differ, besides I/O), then a store's ``_execute`` runs the plan: all reads
first, against the state before the batch, then all writes. Reads that return items with a
TTL restart it (``refresh_ttl``); writes sweep expired items every ``sweep_interval_minutes``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stepgraph.store._embed import Index, Vector
from stepgraph.store._query import Record, check_filter
from stepgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    StoreError,
    TTLConfig,
    validate_labels,
)

__all__ = ["BatchPlan", "PlannedStore", "Write"]

DEFAULT_SWEEP_MINUTES = 5
_US_PER_MINUTE = 60_000_000
_MAX_TIME = 2**62
"""Latest expiry (µs): far future, and still a valid SQL BIGINT."""


def expiry(now: int, ttl: float) -> int:
    """When an item with ``ttl`` minutes, written or read at ``now`` (µs), expires."""
    return min(now + int(ttl * _US_PER_MINUTE), _MAX_TIME)


class Write:
    """One deduplicated put or delete (``value is None``), ready to apply."""

    __slots__ = ("namespace", "key", "value", "index", "ttl", "expires", "vectors")

    def __init__(self, op: PutOp, now: int) -> None:
        self.namespace = tuple(op.namespace)
        self.key = str(op.key)
        value = op.value
        if value is not None and not isinstance(value, Mapping):
            raise StoreError(
                f"A store value must be a dict, got {type(value).__name__}.",
                code="SG436",
                hint='wrap it, e.g. {"data": value}',
            )
        self.value: dict[str, Any] | None = None if value is None else dict(value)
        self.index = op.index
        ttl = op.ttl
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < math.inf
        ):
            raise StoreError(
                f"ttl must be a positive number of minutes or None, got {ttl!r}.",
                code="SG436",
                hint="ttl=60 keeps an item for an hour after its last write or read",
            )
        self.ttl: float | None = None if ttl is None else float(ttl)
        self.expires = None if ttl is None else expiry(now, ttl)
        self.vectors: list[tuple[str, Vector]] = []


class BatchPlan:
    """A batch split into reads and writes, with what must be embedded first."""

    def __init__(self, ops: Iterable[Op], index: Index | None, now: int, sweep: bool) -> None:
        self.now = now
        """Time of the batch (µs since the epoch)."""
        self.sweep = sweep
        """Whether to delete every expired item too."""
        self.swept = 0
        self.results: list[Result] = []
        self.reads: list[tuple[int, GetOp | SearchOp | ListNamespacesOp]] = []
        self.writes: dict[tuple[tuple[str, ...], str], Write] = {}
        self.queries: dict[str, Vector | None] = {}
        self.refreshed: list[Record] = []
        """Records whose TTL the reads restarted (SQL stores write their new expiry)."""
        self.may_refresh = False
        for i, op in enumerate(ops):
            self.results.append(None)
            if isinstance(op, PutOp):
                validate_labels(op.namespace)
                write = Write(op, now)
                self.writes[write.namespace, write.key] = write
                continue
            if isinstance(op, GetOp):
                validate_labels(op.namespace)
            elif isinstance(op, SearchOp):
                validate_labels(op.namespace_prefix)
                check_filter(op.filter)
                if op.query and index is not None:
                    self.queries[op.query] = None
            elif isinstance(op, ListNamespacesOp):
                for cond in op.match_conditions or ():
                    validate_labels(cond.path)
            else:
                raise StoreError(
                    f"Unknown store operation {type(op).__name__}.",
                    code="SG430",
                    hint="batch takes GetOp, SearchOp, PutOp and ListNamespacesOp",
                )
            self.may_refresh |= getattr(op, "refresh_ttl", False)
            self.reads.append((i, op))
        self._docs: dict[str, list[tuple[Write, str]]] = {}
        if index is not None:
            for w in self.writes.values():
                if w.value is not None and w.index is not False:
                    for field, text in index.texts(w.value, w.index):
                        self._docs.setdefault(text, []).append((w, field))

    @property
    def texts(self) -> list[str]:
        """Distinct texts the writes need embedded."""
        return list(self._docs)

    @property
    def write(self) -> bool:
        """Whether running the plan may change stored rows."""
        return bool(self.writes) or self.sweep or self.may_refresh

    def attach(self, index: Index, docs: list[Vector], queries: list[Vector]) -> None:
        """Record the embeddings of ``texts`` and of the queries (in ``queries`` order)."""
        docs = index.check(docs, len(self._docs))
        for vec, refs in zip(docs, self._docs.values(), strict=True):
            for write, field in refs:
                write.vectors.append((field, vec))
        queries = index.check(queries, len(self.queries))
        self.queries = dict(zip(self.queries, queries, strict=True))

    # --- results (executors call these) --------------------------------------------------
    def touch(self, op: GetOp | SearchOp, record: Record) -> None:
        """Restart ``record``'s TTL if ``op`` asks for it."""
        if op.refresh_ttl and record.ttl is not None:
            record.expires = expiry(self.now, record.ttl)
            self.refreshed.append(record)

    def found(self, i: int, op: GetOp, record: Record | None) -> None:
        """Result of get op ``i``."""
        if record is not None:
            self.touch(op, record)
            self.results[i] = record.item()

    def ranked(self, i: int, op: SearchOp, page: list[tuple[Record, float | None]]) -> None:
        """Result of search op ``i``: one page of ``(record, score)``."""
        for record, _ in page:
            self.touch(op, record)
        self.results[i] = [
            record.search_item(None if score is None else float(score)) for record, score in page
        ]

    def query_vector(self, op: SearchOp) -> Vector | None:
        """The embedded query of ``op`` (``None``: rank by insertion order)."""
        return self.queries.get(op.query) if op.query else None


class PlannedStore(BaseStore):
    """A store that runs batches as ``BatchPlan``s; subclasses implement ``_execute``.

    ``index``: an ``IndexConfig`` enabling semantic search. ``ttl``: a ``TTLConfig``. TTLs
    are always supported. ``clock`` (seconds since the epoch) may be replaced in tests.
    """

    supports_ttl = True

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None):
        self.index_config: IndexConfig | None = dict(index) if index else None  # type: ignore[assignment]
        self._index = Index(index) if index else None
        self.ttl_config = dict(ttl) if ttl else None  # type: ignore[assignment]
        self.clock: Callable[[], float] = time.time
        self._next_sweep = 0.0

    def _plan(self, ops: Iterable[Op], sweep: bool = False) -> BatchPlan:
        now = self.clock()
        plan = BatchPlan(ops, self._index, int(now * 1_000_000), sweep)
        if plan.writes and now >= self._next_sweep:
            plan.sweep = True
        if plan.sweep:
            minutes = (self.ttl_config or {}).get("sweep_interval_minutes")
            self._next_sweep = now + 60 * (minutes or DEFAULT_SWEEP_MINUTES)
        return plan

    # --- execution, provided by subclasses ----------------------------------------------
    def _execute(self, plan: BatchPlan) -> list[Result]:
        """Run ``plan`` (reads, then writes, then the sweep) and return its results."""
        raise NotImplementedError

    async def _aexecute(self, plan: BatchPlan) -> list[Result]:
        """Async ``_execute``; by default the sync one."""
        return self._execute(plan)

    # --- batches ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: reads see the state before the batch; the last put of a key wins."""
        plan = self._plan(ops)
        if self._index is not None and (plan.texts or plan.queries):
            embedder = self._index.embedder
            docs = embedder.documents(plan.texts) if plan.texts else []
            plan.attach(self._index, docs, [embedder.query(q) for q in plan.queries])
        return self._execute(plan)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch``: embeddings use the async API of ``index['embed']``."""
        plan = self._plan(ops)
        if self._index is not None and (plan.texts or plan.queries):
            embedder = self._index.embedder
            docs = await embedder.adocuments(plan.texts) if plan.texts else []
            queries = await asyncio.gather(*(embedder.aquery(q) for q in plan.queries))
            plan.attach(self._index, docs, list(queries))
        return await self._aexecute(plan)

    def sweep_ttl(self) -> int:
        """Delete every expired item now; returns how many were deleted."""
        plan = self._plan((), sweep=True)
        self._execute(plan)
        return plan.swept

    async def asweep_ttl(self) -> int:
        """Async ``sweep_ttl``."""
        plan = self._plan((), sweep=True)
        await self._aexecute(plan)
        return plan.swept
