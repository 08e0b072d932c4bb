"""Threads: metadata, status and a copy of the latest values for search."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.resources.common import search_page
from stepgraph.server.resources.extract import extract_fields, extract_roots
from stepgraph.server.runtime.ttl import ThreadTtlPolicy, ttl_record
from stepgraph.server.storage.filters import AccessFilter, DocQuery
from stepgraph.server.util import now_iso

if TYPE_CHECKING:
    from stepgraph.server.schemas.threads import (
        ThreadCount,
        ThreadCreate,
        ThreadPatch,
        ThreadSearch,
    )
    from stepgraph.server.storage import DocStore

__all__ = ["STATUSES", "Threads"]

KIND = "thread"
STATUSES = ("idle", "busy", "interrupted", "error")


def new_thread_doc(thread_id: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """A fresh idle thread."""
    now = now_iso()
    return {
        "thread_id": thread_id, "created_at": now, "updated_at": now, "state_updated_at": now,
        "metadata": metadata or {}, "status": "idle", "config": {}, "values": None,
        "interrupts": {}, "error": None,
    }


def public(doc: dict[str, Any]) -> dict[str, Any]:
    """The thread as the API shows it (internal keys dropped)."""
    return {k: v for k, v in doc.items() if not k.startswith("_")}


class Threads:
    """Stored threads. ``access`` arguments are an authorization filter on the metadata: a
    thread that does not pass it is treated as missing (404, left out of searches)."""

    def __init__(self, docs: DocStore, ttl: ThreadTtlPolicy | None = None) -> None:
        self.docs = docs
        self.ttl = ttl or ThreadTtlPolicy()

    async def create(self, req: ThreadCreate, access: AccessFilter | None = None) -> dict[str, Any]:
        """``POST /threads`` (a client-chosen ``thread_id`` is allowed; 409 when taken)."""
        thread_id = req.thread_id or str(uuid.uuid4())
        doc = new_thread_doc(thread_id, req.metadata)
        ttl = ttl_record(req.ttl, self.ttl)
        if ttl is not None:
            doc["_ttl"] = ttl
        if await self.docs.insert(KIND, thread_id, doc):
            return public(doc)
        if req.if_exists == "do_nothing":
            existing = await self.docs.get(KIND, thread_id, access=access)
            if existing is not None:
                return public(existing)
        raise ApiError(409, f"Thread with ID {thread_id} already exists.")

    async def ensure(self, thread_id: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """The thread, created when missing (``if_not_exists: "create"``)."""
        existing = await self.docs.get(KIND, thread_id)
        if existing is not None:
            return existing
        doc = new_thread_doc(thread_id, metadata)
        if not await self.docs.insert(KIND, thread_id, doc):
            found = await self.docs.get(KIND, thread_id)
            return found if found is not None else doc
        return doc

    async def find(self, thread_id: str, access: AccessFilter | None = None) -> dict[str, Any] | None:
        """The stored thread or ``None``."""
        return await self.docs.get(KIND, thread_id, access=access)

    async def exists(self, thread_id: str) -> bool:
        """Whether a thread with this id is stored (whoever may see it)."""
        return await self.docs.get(KIND, thread_id, fields=frozenset({"thread_id"})) is not None

    async def get(self, thread_id: str, access: AccessFilter | None = None) -> dict[str, Any]:
        """The thread (404 when unknown)."""
        doc = await self.docs.get(KIND, thread_id, access=access)
        if doc is None:
            raise ApiError(404, f"Thread with ID {thread_id} not found")
        return doc

    def _query(self, req: ThreadCount, access: AccessFilter | None) -> DocQuery:
        return DocQuery(
            ids=tuple(req.ids) if req.ids is not None else None,
            metadata=req.metadata or None, values=req.values or None,
            status=req.status, access=access,
        )

    async def search(self, req: ThreadSearch, access: AccessFilter | None = None,
                     ) -> tuple[list[dict[str, Any]], int, int, int]:
        """``POST /threads/search``: ``(page, total, offset, limit)``."""
        select = req.select
        extract = req.extract
        fields = frozenset(select) | extract_roots(extract) if select else None
        items, total, offset, limit = await search_page(self.docs, KIND, self._query(req, access), req, fields)
        items = [public(d) for d in items]
        if extract:
            for d in items:
                d["extracted"] = extract_fields(d, extract)
        if select:
            keep = [*select, "extracted"] if extract else select
            items = [{k: d.get(k) for k in keep} for d in items]
        return items, total, offset, limit

    async def with_ttl(self) -> list[dict[str, Any]]:
        """The records of threads that have a TTL (their small fields only), oldest update first."""
        docs = await self.docs.query(KIND, DocQuery(sort_by="updated_at", descending=False,
                                                    fields=frozenset({"thread_id", "status", "updated_at"})))
        return [d for d in docs if d.get("_ttl")]

    async def mark_pruned(self, thread_id: str, updated_at: Any) -> None:
        """Note that a ``keep_latest`` expiry was applied for the update at ``updated_at``."""
        def change(doc: dict[str, Any]) -> None:
            doc["_ttl_pruned"] = updated_at

        await self.docs.update(KIND, thread_id, change)

    async def count(self, req: ThreadCount, access: AccessFilter | None = None) -> int:
        """``POST /threads/count``."""
        return await self.docs.count(KIND, self._query(req, access))

    async def ids(self, *, metadata: dict[str, Any] | None = None, access: AccessFilter | None = None) -> list[str]:
        """Ids of the threads whose metadata contains ``metadata`` (and pass ``access``)."""
        docs = await self.docs.query(KIND, DocQuery(metadata=metadata, access=access,
                                                    fields=frozenset({"thread_id"})))
        return [d["thread_id"] for d in docs]

    async def update(self, thread_id: str, **fields: Any) -> dict[str, Any] | None:
        """Set fields of a thread (``None`` when it does not exist); bumps ``updated_at``."""
        meta = fields.pop("merge_metadata", None)

        def change(doc: dict[str, Any]) -> None:
            doc.update(fields)
            if meta:
                doc["metadata"] = {**(doc.get("metadata") or {}), **meta}
            doc["updated_at"] = now_iso()

        return await self.docs.update(KIND, thread_id, change)

    async def patch(self, thread_id: str, req: ThreadPatch, access: AccessFilter | None = None) -> dict[str, Any]:
        """``PATCH /threads/{id}``: merge metadata."""
        await self.get(thread_id, access)
        metadata = req.metadata or {}
        changes: dict[str, Any] = {}
        if req.ttl is not None:
            changes["_ttl"] = ttl_record(req.ttl, self.ttl)
        doc = await self.update(thread_id, merge_metadata=metadata, **changes)
        if doc is None:
            raise ApiError(404, f"Thread with ID {thread_id} not found")
        return public(doc)

    async def delete(self, thread_id: str) -> bool:
        """Delete the thread document (checkpoints and runs are the caller's job)."""
        return await self.docs.delete(KIND, thread_id)

    async def all(self) -> list[dict[str, Any]]:
        """Every thread."""
        return await self.docs.list(KIND)
