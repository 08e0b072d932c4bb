"""The store data model: items, ops, configs, errors and namespace validation.

Everything here is re-exported by ``stepgraph.store.base`` (import it from there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, NamedTuple, TypedDict

from stepgraph.errors import StepgraphError

__all__ = [
    "NOT_PROVIDED",
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


class NotProvided:
    """The type of ``NOT_PROVIDED``: "argument not given", distinct from ``None``."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_PROVIDED = NotProvided()


class StoreError(StepgraphError, ValueError):
    """A store was misused or misconfigured (codes SG43x)."""

    code = "SG430"


class InvalidNamespaceError(StoreError):
    """A namespace cannot be stored: empty, a non-str/empty/dotted label, or root "langgraph"."""

    code = "SG431"


def _as_datetime(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


class Item:
    """A stored value with its key, namespace and UTC creation/update times."""

    __slots__ = ("value", "key", "namespace", "created_at", "updated_at")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime | str,
        updated_at: datetime | str,
    ) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _as_datetime(created_at)
        self.updated_at = _as_datetime(updated_at)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return NotImplemented
        return (self.namespace, self.key, self.value, self.created_at, self.updated_at) == (
            other.namespace, other.key, other.value, other.created_at, other.updated_at,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict[str, Any]:
        """JSON-ready form: namespace as a list, timestamps as ISO-8601 strings."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.dict().items())
        return f"{type(self).__name__}({fields})"


class SearchItem(Item):
    """An ``Item`` returned by ``search``; ``score`` is its similarity (``None`` if unranked)."""

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime | str,
        updated_at: datetime | str,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at
        )
        self.score = score

    def dict(self) -> dict[str, Any]:
        """``Item.dict()`` plus ``score``."""
        return {**super().dict(), "score": self.score}


class GetOp(NamedTuple):
    """Read the item at ``(namespace, key)``; ``refresh_ttl`` restarts its TTL."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    """Items under ``namespace_prefix`` matching ``filter``, ranked by ``query`` if indexed."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True


NamespacePath = tuple[str, ...]
"""A namespace pattern; the label ``"*"`` matches any one label."""
NamespaceMatchType = Literal["prefix", "suffix"]


class MatchCondition(NamedTuple):
    """A namespace must start (``prefix``) or end (``suffix``) with ``path``."""

    match_type: NamespaceMatchType
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """List namespaces matching all conditions, truncated to ``max_depth``, sorted."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    """Store ``value`` at ``(namespace, key)``, or delete it when ``value`` is ``None``.

    ``index``: ``None`` embeds the store's configured fields, ``False`` nothing, a list of
    paths those paths. ``ttl``: minutes until the item expires (``None``: never).
    """

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any] | None
    index: Literal[False] | list[str] | None = None
    ttl: float | None = None


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None


class TTLConfig(TypedDict, total=False):
    """Store-wide TTL settings; times are in minutes."""

    refresh_on_read: bool
    """Whether get/search restart the TTL of the items they return (default ``True``)."""
    default_ttl: float | None
    """TTL of items put without an explicit ``ttl`` (default: never expire)."""
    sweep_interval_minutes: int | None
    """How often writes also delete every expired item (stepgraph default: 5)."""


class IndexConfig(TypedDict, total=False):
    """Semantic-search settings: vector size, embedding function and fields to embed."""

    dims: int
    embed: Any
    """A callable ``list[str] -> list[list[float]]`` (sync or async), or an object with
    ``embed_documents``/``embed_query`` (and optionally their ``a*`` twins), e.g. a LangChain
    ``Embeddings``; a ``"provider:model"`` string needs ``langchain``."""
    fields: list[str] | None
    """JSON paths to embed (``"$"``: the whole value, the default)."""


# --- validation ------------------------------------------------------------------------
def validate_labels(namespace: Sequence[Any]) -> None:
    """Raise ``InvalidNamespaceError`` for a non-str, empty, dotted or NUL-holding label."""
    for label in namespace:
        if not isinstance(label, str):
            problem = f"must be strings, but got {type(label).__name__}"
        elif not label:
            problem = "cannot be empty strings"
        elif "." in label:
            problem = "cannot contain periods ('.')"
        elif "\x00" in label:
            problem = "cannot contain NUL bytes"
        else:
            continue
        raise InvalidNamespaceError(
            f"Invalid namespace label {label!r} found in {tuple(namespace)}. "
            f"Namespace labels {problem}.",
            code=InvalidNamespaceError.code,
            hint="use non-empty string labels without '.', e.g. ('users', 'u1')",
        )


def validate_namespace(namespace: Sequence[Any]) -> None:
    """The checks of ``put``: labels, plus not empty and not rooted at ``"langgraph"``."""
    if not namespace:
        raise InvalidNamespaceError(
            "Namespace cannot be empty.",
            code=InvalidNamespaceError.code,
            hint="give at least one label, e.g. ('memories',)",
        )
    validate_labels(namespace)
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {tuple(namespace)}',
            code=InvalidNamespaceError.code,
            hint='the "langgraph" root is reserved; choose another first label',
        )
