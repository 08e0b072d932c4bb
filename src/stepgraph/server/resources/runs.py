"""Runs: the stored record of each run (status, kwargs, strategy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.storage.filters import DocQuery
from stepgraph.server.util import now_iso

if TYPE_CHECKING:
    from stepgraph.server.storage import DocStore

__all__ = ["ACTIVE", "RUN_STATUSES", "Runs"]

KIND = "run"
RUN_STATUSES = ("pending", "running", "success", "error", "timeout", "interrupted")
ACTIVE = ("pending", "running")


def public(doc: dict[str, Any]) -> dict[str, Any]:
    """The run as the API shows it (internal keys dropped)."""
    return {k: v for k, v in doc.items() if not k.startswith("_")}


class Runs:
    """Stored runs, attached to their thread."""

    def __init__(self, docs: DocStore) -> None:
        self.docs = docs

    async def insert(self, doc: dict[str, Any]) -> None:
        """Store a new run."""
        await self.docs.put(KIND, doc["run_id"], doc, thread_id=doc["thread_id"])

    async def find(self, run_id: str) -> dict[str, Any] | None:
        """The run or ``None``."""
        return await self.docs.get(KIND, run_id)

    async def get(self, thread_id: str | None, run_id: str) -> dict[str, Any]:
        """The run of ``thread_id`` (any thread when ``None``); 404 when unknown."""
        doc = await self.docs.get(KIND, run_id)
        if doc is None or (thread_id is not None and doc.get("thread_id") != thread_id):
            raise ApiError(404, f"Run {run_id} not found")
        return doc

    async def list(self, thread_id: str, *, limit: int = 10, offset: int = 0,
                   status: str | None = None, fields: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """Runs of a thread, newest first (only ``fields`` decoded when given)."""
        return await self.docs.query(KIND, DocQuery(thread_id=thread_id, status=status, limit=limit,
                                                    offset=offset, fields=fields))

    async def all(self) -> list[dict[str, Any]]:
        """Every stored run."""
        return await self.docs.list(KIND)

    async def set_status(self, run_id: str, status: str, **extra: Any) -> dict[str, Any] | None:
        """Change a run's status (and other fields)."""

        def change(doc: dict[str, Any]) -> None:
            doc["status"] = status
            doc.update(extra)
            doc["updated_at"] = now_iso()

        return await self.docs.update(KIND, run_id, change)

    async def delete(self, run_id: str) -> bool:
        """Delete one run record."""
        return await self.docs.delete(KIND, run_id)

    async def delete_thread(self, thread_id: str) -> int:
        """Delete every run record of a thread."""
        return await self.docs.delete_for_thread(KIND, thread_id)
