"""Long-term memory stores, compatible with ``langgraph.store``.

* ``stepgraph.store.base``: ``BaseStore``, ``Item``, the ops and configs.
* ``stepgraph.store.memory.InMemoryStore``: in process memory.
* ``stepgraph.store.sqlite.SqliteStore`` (and ``.aio.AsyncSqliteStore``): one SQLite file.
* ``stepgraph.store.postgres.PostgresStore`` / ``AsyncPostgresStore``: PostgreSQL (psycopg 3).

Every store supports TTLs (minutes) and, given ``index={"dims", "embed", "fields"}``,
semantic search ranked by cosine similarity computed in Python.
"""

from stepgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
    StoreError,
    TTLConfig,
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
    "PutOp",
    "SearchItem",
    "SearchOp",
    "StoreError",
    "TTLConfig",
]
