"""Store read logic shared by every stepgraph store: records, filters, namespaces, ranking.

SQL stores narrow rows by namespace in SQL and then apply the same Python code as the
in-memory store, so filters, ordering and scores are identical everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from stepgraph.store._embed import Vector, best_scores
from stepgraph.store.base import (
    Item,
    ListNamespacesOp,
    MatchCondition,
    SearchItem,
    SearchOp,
    StoreError,
)

__all__ = ["Record", "check_filter", "list_namespaces", "matches", "rank", "to_datetime"]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RANGE = {
    "$gt": float.__gt__,
    "$gte": float.__ge__,
    "$lt": float.__lt__,
    "$lte": float.__le__,
}
OPERATORS = frozenset({"$eq", "$ne", *_RANGE})


def to_datetime(us: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime (exact)."""
    return EPOCH + timedelta(microseconds=us)


class Record:
    """A stored item as the stores handle it: times in microseconds since the epoch."""

    __slots__ = (
        "namespace", "key", "value", "created", "updated", "expires", "ttl", "seq", "vectors",
    )  # fmt: skip

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created: int,
        updated: int,
        expires: int | None = None,
        ttl: float | None = None,
        seq: int = 0,
    ) -> None:
        self.namespace = namespace
        self.key = key
        self.value = value
        self.created = created
        self.updated = updated
        self.expires = expires
        """When the item expires (µs), ``None``: never."""
        self.ttl = ttl
        """The item's TTL in minutes, restarted by reads that refresh it."""
        self.seq = seq
        """Insertion rank: unranked search results come in this order."""
        self.vectors: list[Vector] = []

    def live(self, now: int) -> bool:
        """Not expired at ``now`` (µs)."""
        return self.expires is None or self.expires > now

    def public_value(self) -> dict[str, Any]:
        """The value handed to callers (the in-memory store returns a copy)."""
        return self.value

    def item(self) -> Item:
        """This record as an ``Item``."""
        return Item(
            value=self.public_value(),
            key=self.key,
            namespace=self.namespace,
            created_at=to_datetime(self.created),
            updated_at=to_datetime(self.updated),
        )

    def search_item(self, score: float | None) -> SearchItem:
        """This record as a ``SearchItem`` with ``score``."""
        return SearchItem(
            self.namespace,
            self.key,
            self.public_value(),
            to_datetime(self.created),
            to_datetime(self.updated),
            score,
        )


# --- filters -------------------------------------------------------------------------------
def check_filter(filter: Any) -> None:
    """Raise ``StoreError`` SG432 for an operator the stores do not know."""
    if isinstance(filter, dict):
        for key, sub in filter.items():
            if isinstance(key, str) and key.startswith("$") and key not in OPERATORS:
                raise StoreError(
                    f"Unsupported filter operator {key!r}.",
                    code="SG432",
                    hint="use $eq, $ne, $gt, $gte, $lt or $lte",
                )
            check_filter(sub)
    elif isinstance(filter, (list, tuple)):
        for sub in filter:
            check_filter(sub)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return actual == operand
    if op == "$ne":
        return actual != operand
    try:
        return _RANGE[op](float(actual), float(operand))
    except (TypeError, ValueError):  # missing or non-numeric: no match (LangGraph raises)
        return False


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in expected):
            return all(_apply(actual, op, operand) for op, operand in expected.items())
        return isinstance(actual, dict) and all(
            _compare(actual.get(k), v) for k, v in expected.items()
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return actual == expected


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    """Whether ``value`` passes ``filter`` (equality, nested dicts, exact lists, operators)."""
    return not filter or all(_compare(value.get(k), v) for k, v in filter.items())


# --- namespaces ------------------------------------------------------------------------------
def _condition_holds(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    part = ns[: len(path)] if cond.match_type == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == label for p, label in zip(path, part, strict=True))


def literal_prefix(op: ListNamespacesOp) -> tuple[str, ...]:
    """The labels every listed namespace must start with (prefix labels before a ``*``)."""
    for cond in op.match_conditions or ():
        if cond.match_type == "prefix":
            labels = list(cond.path)
            return tuple(labels[: labels.index("*")] if "*" in labels else labels)
    return ()


def list_namespaces(op: ListNamespacesOp, namespaces: Iterable[tuple[str, ...]]) -> list:
    """The answer to ``op`` given the namespaces that hold live items."""
    conditions = op.match_conditions or ()
    found = {
        ns if op.max_depth is None else ns[: op.max_depth]
        for ns in namespaces
        if all(_condition_holds(c, ns) for c in conditions)
    }
    offset = max(op.offset, 0)
    return sorted(found)[offset : offset + max(op.limit, 0)]


# --- search ----------------------------------------------------------------------------------
def rank(
    op: SearchOp, records: Iterable[Record], query: Vector | None
) -> list[tuple[Record, float | None]]:
    """One page of ``op``'s results from ``records`` (in insertion order) and its score.

    Without a query vector: matching records in order. With one: records with vectors by
    best cosine score (descending, ties in insertion order), then those without, score None.
    """
    offset, limit = max(op.offset, 0), max(op.limit, 0)
    hits: Iterator[Record] = (r for r in records if matches(r.value, op.filter))
    if query is None:
        return [(r, None) for r in islice(hits, offset, offset + limit)]
    with_vectors: list[Record] = []
    unscored: list[Record] = []
    for r in hits:
        (with_vectors if r.vectors else unscored).append(r)
    scores = best_scores(query, [r.vectors for r in with_vectors])
    scored = list(zip(scores, with_vectors, strict=True))
    scored.sort(key=lambda pair: -pair[0])
    ranked = [(r, s) for s, r in scored] + [(r, None) for r in unscored]
    return ranked[offset : offset + limit]  # type: ignore[return-value]
