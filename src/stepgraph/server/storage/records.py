"""How a server document is laid out in the ``sg_server_records`` table.

A document (assistant, thread, run, cron) is stored as:

* indexed columns for what searches filter and sort on: ``status``, ``created_at``,
  ``updated_at``, ``state_updated_at``, ``name``, ``graph_id`` (and ``id``, ``thread_id``);
* ``metadata``: the document's metadata as JSON, for containment and access filters in SQL;
* ``doc``: the document without its large fields (small: decoded for every listed row);
* ``vals``: a thread's ``values`` as JSON; ``large``: the other large fields
  (a thread's ``interrupts``, a run's ``kwargs``) as one JSON object.

The large columns come last in the table, so a database reading the small ones never
walks through them, and a search decodes them only for the page it returns (when the
caller asks for those fields).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from stepgraph.server.serde import dumps, loads

__all__ = [
    "COLUMNS",
    "CRON_SORT_COLUMNS",
    "LARGE_FIELDS",
    "SORT_COLUMNS",
    "VALUES",
    "Row",
    "decode_row",
    "encode_row",
    "needs_large",
    "needs_values",
    "sort_column",
]

VALUES = "values"
LARGE_FIELDS: dict[str, tuple[str, ...]] = {"thread": ("interrupts",), "run": ("kwargs",)}
COLUMNS = ("status", "created_at", "updated_at", "state_updated_at", "name", "graph_id")
"""Document fields copied into columns of the same name (``NULL`` unless a string)."""
SORT_COLUMNS = {
    "thread_id": "id", "assistant_id": "id", "run_id": "id",
    **{c: c for c in COLUMNS},
}
"""Sortable document field -> column."""
CRON_COLUMNS = {"status": "enabled", "state_updated_at": "next_run_date", "name": "end_time",
                "graph_id": "assistant_id"}
"""A cron's columns: ``status`` holds ``"enabled"``/``"disabled"``, the others the named fields
(so crons filter on enabled/assistant, sort by next run or end time, and a firing is claimed
by comparing ``state_updated_at``, its next run date)."""
CRON_SORT_COLUMNS = {"cron_id": "id", "thread_id": "thread_id", "assistant_id": "graph_id",
                     "next_run_date": "state_updated_at", "end_time": "name",
                     "created_at": "created_at", "updated_at": "updated_at"}
"""Sortable cron field -> column."""


def sort_column(kind: str, field: str) -> str:
    """The column a search of ``kind`` sorts on for document field ``field``."""
    return CRON_SORT_COLUMNS[field] if kind == "cron" else SORT_COLUMNS[field]


def column_values(kind: str, doc: dict[str, Any]) -> tuple[str | None, ...]:
    """The values of ``COLUMNS`` for ``doc`` (``NULL`` unless a string)."""
    if kind == "cron":
        fields = {**{c: doc.get(c) for c in COLUMNS}, **{c: doc.get(f) for c, f in CRON_COLUMNS.items()}}
        fields["status"] = "enabled" if doc.get("enabled") else "disabled"
        return tuple(v if isinstance(v, str) else None for v in fields.values())
    return tuple(doc.get(c) if isinstance(doc.get(c), str) else None for c in COLUMNS)


def _text(obj: Any) -> str:
    return dumps(obj, stream=False).decode()


@dataclass(frozen=True)
class Row:
    """One document ready to be written."""

    kind: str
    id: str
    thread_id: str | None
    columns: tuple[str | None, ...]
    metadata: str
    doc: str
    vals: str | None
    large: str | None


def encode_row(kind: str, doc_id: str, doc: dict[str, Any], thread_id: str | None) -> Row:
    """Split ``doc`` into its columns."""
    large_keys = LARGE_FIELDS.get(kind, ())
    small = {k: v for k, v in doc.items() if k != VALUES and k not in large_keys}
    large = {k: doc[k] for k in large_keys if k in doc}
    metadata = doc.get("metadata")
    return Row(
        kind=kind, id=doc_id, thread_id=thread_id,
        columns=column_values(kind, doc),
        metadata=_text(metadata if isinstance(metadata, dict) else {}),
        doc=_text(small),
        vals=_text(doc[VALUES]) if VALUES in doc else None,
        large=_text(large) if large else None,
    )


def decode_row(doc: str | bytes, vals: str | bytes | None = None, large: str | bytes | None = None) -> dict[str, Any]:
    """The document from its stored parts (``vals``/``large`` when they were read)."""
    out = loads(doc)
    if large is not None:
        out.update(loads(large))
    if vals is not None:
        out[VALUES] = loads(vals)
    return out


def needs_values(fields: Iterable[str] | None) -> bool:
    """Whether a caller wanting ``fields`` (``None``: all) needs the ``vals`` column."""
    return fields is None or VALUES in fields


def needs_large(kind: str, fields: Iterable[str] | None) -> bool:
    """Whether a caller wanting ``fields`` needs the ``large`` column of ``kind``."""
    keys = LARGE_FIELDS.get(kind, ())
    return bool(keys) and (fields is None or any(k in keys for k in fields))
