"""Server documents (runs) read and written on a given connection, inside its transaction.

The records table is ``storage.sqlbase``'s; these helpers let a cluster transaction change a
run's document together with its queue row (admission, cancel, fenced final status).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stepgraph.server.storage import records
from stepgraph.server.storage.sqlbase import TABLE
from stepgraph.server.util import now_iso

__all__ = ["delete_doc", "lock_thread", "put_doc", "update_run"]


async def put_doc(conn: Any, docs: Any, kind: str, doc_id: str, doc: dict[str, Any],
                  thread_id: str | None) -> None:
    """Insert or replace a document (``docs``: the backend's ``PostgresDocStore``)."""
    row = records.encode_row(kind, doc_id, doc, thread_id)
    await conn.execute(docs._insert_sql(docs._UPSERT), docs._row_params(row))


async def update_run(conn: Any, docs: Any, run_id: str, change: Callable[[dict[str, Any]], None]
                     ) -> dict[str, Any] | None:
    """Read a run document with a row lock, apply ``change`` and write it back."""
    row = await (await conn.execute(
        f"SELECT doc, vals, large, thread_id FROM {TABLE} WHERE kind = 'run' AND id = %s FOR UPDATE",
        (run_id,))).fetchone()
    if row is None:
        return None
    doc = records.decode_row(row[0], row[1], row[2])
    change(doc)
    doc["updated_at"] = now_iso()
    await put_doc(conn, docs, "run", run_id, doc, row[3])
    return doc


def set_status(status: str, **extra: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["status"] = status
        doc.update(extra)

    return change


async def delete_doc(conn: Any, kind: str, doc_id: str) -> None:
    await conn.execute(f"DELETE FROM {TABLE} WHERE kind = %s AND id = %s", (kind, doc_id))


async def lock_thread(conn: Any, thread_id: str) -> bool:
    """Lock the thread's record for the transaction (admission per thread is serialized)."""
    row = await (await conn.execute(
        f"SELECT 1 FROM {TABLE} WHERE kind = 'thread' AND id = %s FOR UPDATE", (thread_id,))).fetchone()
    return row is not None
