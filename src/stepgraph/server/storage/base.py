"""What the server persists besides checkpoints: assistants, threads and runs as documents.

``DocStore`` is a document table keyed by ``(kind, id)``, with a ``thread_id`` column so a
thread's runs can be listed and deleted together. Searches (``DocQuery``) filter, sort,
count and page in SQL (``sqlquery``), and only the returned page is decoded; large fields
(thread values, run kwargs) only when the caller asks for them (``records``). ``Backend``
bundles the document table with the checkpoint saver and the long-term store that share
the same database.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from stepgraph.server.serde import dumps, loads
from stepgraph.server.storage.filters import AccessFilter, DocQuery

__all__ = ["Backend", "DocStore", "decode_doc", "encode_doc"]


def encode_doc(doc: dict[str, Any]) -> str:
    """A document as JSON text."""
    return dumps(doc, stream=False).decode()


def decode_doc(text: str | bytes) -> dict[str, Any]:
    """A document from JSON text."""
    return loads(text)


class DocStore(ABC):
    """Persistent JSON documents keyed by ``(kind, id)``; kinds are assistant, thread, run, cron."""

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    @abstractmethod
    async def setup(self) -> None:
        """Create the table if needed."""

    @abstractmethod
    async def get(self, kind: str, doc_id: str, *, access: AccessFilter | None = None,
                  fields: frozenset[str] | None = None) -> dict[str, Any] | None:
        """The document, or ``None`` (also when it does not pass ``access``).

        ``fields`` as in ``DocQuery``: large fields not named are not read.
        """

    @abstractmethod
    async def insert(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> bool:
        """Store a new document; ``False`` (and no change) when the id already exists."""

    @abstractmethod
    async def put(self, kind: str, doc_id: str, doc: dict[str, Any], *, thread_id: str | None = None) -> None:
        """Insert or replace a document."""

    @abstractmethod
    async def swap(self, kind: str, doc_id: str, doc: dict[str, Any], *, column: str,
                   expected: str | None) -> bool:
        """Replace the document only if its indexed ``column`` still holds ``expected``, in one
        atomic statement; whether it did (a compare-and-swap: of several processes sharing the
        database, exactly one wins). The document's ``thread_id`` is kept."""

    @abstractmethod
    async def delete(self, kind: str, doc_id: str) -> bool:
        """Delete a document; whether it existed."""

    @abstractmethod
    async def delete_for_thread(self, kind: str, thread_id: str) -> int:
        """Delete every document of ``kind`` attached to ``thread_id``."""

    @abstractmethod
    async def query(self, kind: str, q: DocQuery) -> list[dict[str, Any]]:
        """The documents of ``kind`` matching ``q``, sorted and paged."""

    @abstractmethod
    async def count(self, kind: str, q: DocQuery) -> int:
        """How many documents of ``kind`` match ``q`` (its sort and page ignored)."""

    async def list(self, kind: str, *, thread_id: str | None = None) -> list[dict[str, Any]]:
        """Every document of ``kind`` (only those of ``thread_id`` when given), oldest first."""
        return await self.query(kind, DocQuery(thread_id=thread_id, descending=False))

    async def update(
        self, kind: str, doc_id: str, change: Callable[[dict[str, Any]], Any], *, thread_id: str | None = None,
    ) -> dict[str, Any] | None:
        """Read, change in place with ``change(doc)`` and write back; ``None`` if missing.

        Updates of one document through one ``DocStore`` are serialized, so concurrent
        changes are not lost (different documents are updated concurrently).
        """
        key = (kind, doc_id)
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                doc = await self.get(kind, doc_id)
                if doc is None:
                    return None
                result = change(doc)
                if isinstance(result, Awaitable):
                    await result
                await self.put(kind, doc_id, doc, thread_id=thread_id)
                return doc
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    async def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release connections (the default does nothing)."""


@dataclass
class Backend:
    """The server's persistence: documents, the checkpoint saver and the long-term store."""

    name: str
    docs: DocStore
    saver: Any
    store: Any
    location: str
