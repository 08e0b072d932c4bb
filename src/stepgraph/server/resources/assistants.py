"""Assistants: a graph id plus config, context and metadata; one system assistant per graph.

Every version is kept: creating an assistant stores version 1, each ``PATCH`` stores the
next (records of kind ``assistant_version``, keyed ``<assistant_id>:<version>`` and grouped
by the assistant id in the ``thread_id`` column, their metadata searchable), and
``POST /assistants/{id}/latest`` makes a stored version the assistant's current one again
(without making a new version, as on LangGraph).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.resources.common import search_page
from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.storage.filters import AccessFilter, DocQuery
from stepgraph.server.util import is_uuid, now_iso, system_assistant_id

if TYPE_CHECKING:
    from stepgraph.server.graphs import GraphRegistry
    from stepgraph.server.schemas.assistants import (
        AssistantCount,
        AssistantCreate,
        AssistantPatch,
        AssistantSearch,
    )
    from stepgraph.server.storage import DocStore

__all__ = ["Assistants"]

KIND = "assistant"
VERSION_KIND = "assistant_version"
_VERSION_FIELDS = ("assistant_id", "graph_id", "config", "context", "metadata", "name", "description", "version")


def _version_doc(doc: dict[str, Any], created_at: str) -> dict[str, Any]:
    return {**{k: doc.get(k) for k in _VERSION_FIELDS}, "created_at": created_at}


def _mirror_context(config: dict[str, Any], context: dict[str, Any] | None) -> dict[str, Any]:
    if context:
        return context
    return dict(config.get("configurable") or {})


class Assistants:
    """Stored assistants; graph ids double as assistant ids where the API allows it."""

    def __init__(self, docs: DocStore, registry: GraphRegistry) -> None:
        self.docs = docs
        self.registry = registry

    async def ensure_system(self) -> None:
        """Create (or keep) the system assistant of every registered graph."""
        for doc in await self.docs.list(KIND):
            meta = doc.get("metadata") or {}
            if meta.get("created_by") == "system" and doc.get("graph_id") not in self.registry:
                await self.docs.delete(KIND, doc["assistant_id"])
        for graph_id in self.registry.ids:
            aid = system_assistant_id(graph_id)
            now = now_iso()
            description = self.registry.descriptions.get(graph_id)
            created = await self.docs.insert(KIND, aid, {
                "assistant_id": aid, "graph_id": graph_id, "config": {}, "context": {},
                "metadata": {"created_by": "system"}, "name": graph_id, "description": description,
                "version": 1, "created_at": now, "updated_at": now,
            })
            if not created:  # keep the config's description in sync (graphs.<id>.description)
                doc = await self.docs.get(KIND, aid)
                if doc is not None and doc.get("description") != description:
                    await self.docs.put(KIND, aid, {**doc, "description": description, "updated_at": now})

    def _check_graph(self, graph_id: str) -> None:
        if graph_id not in self.registry:
            raise ApiError(404, f"Graph '{graph_id}' not found. Registered graphs: {', '.join(self.registry.ids)}")

    async def create(self, req: AssistantCreate, access: AccessFilter | None = None) -> dict[str, Any]:
        """``POST /assistants``."""
        graph_id = req.graph_id
        self._check_graph(graph_id)
        aid = req.assistant_id or str(uuid.uuid4())
        if not is_uuid(aid):
            raise ApiError(422, "Invalid assistant ID: must be a UUID")
        config = as_dict(req.config) or {}
        now = now_iso()
        doc = {
            "assistant_id": aid, "graph_id": graph_id, "config": config,
            "context": _mirror_context(config, req.context),
            "metadata": req.metadata or {}, "name": req.name or "Untitled",
            "description": req.description, "version": 1, "created_at": now, "updated_at": now,
        }
        if await self.docs.insert(KIND, aid, doc):
            await self._keep_version(doc, now)
            return doc
        if req.if_exists == "do_nothing":
            existing = await self.docs.get(KIND, aid, access=access)
            if existing is not None:
                return existing
        raise ApiError(409, f"Assistant '{aid}' already exists.")

    async def get(self, assistant_id: str, access: AccessFilter | None = None) -> dict[str, Any]:
        """An assistant by UUID (422 for anything else, 404 when unknown or not visible)."""
        if not is_uuid(assistant_id):
            raise ApiError(422, "Invalid assistant ID: must be a UUID")
        doc = await self.docs.get(KIND, assistant_id, access=access)
        if doc is None:
            raise ApiError(404, f"Assistant '{assistant_id}' not found.")
        return doc

    async def resolve(self, ref: str, *, status: int = 422, access: AccessFilter | None = None) -> dict[str, Any]:
        """An assistant by UUID or by graph id (its system assistant), as runs accept.

        With ``access``, an assistant that does not pass it is not found (404).
        """
        if ref in self.registry:
            aid = system_assistant_id(ref)
            doc = await self.docs.get(KIND, aid, access=access)
            if doc is not None:
                return doc
            if access is not None and await self.docs.get(KIND, aid) is not None:
                raise ApiError(404, f"Assistant '{ref}' not found.")
        if is_uuid(ref):
            doc = await self.docs.get(KIND, ref, access=access)
            if doc is not None:
                if doc.get("graph_id") not in self.registry:
                    raise ApiError(status, f"Assistant '{ref}' uses graph '{doc.get('graph_id')}', which is not registered.")
                return doc
            if status == 404 or (access is not None and await self.docs.get(KIND, ref) is not None):
                raise ApiError(404, f"Assistant '{ref}' not found.")
        raise ApiError(status, f"Invalid assistant: '{ref}'. Must be either:\n- A valid assistant UUID, or\n"
                               f"- One of the registered graphs: {', '.join(self.registry.ids)}")

    async def visible(self, assistant: dict[str, Any], access: AccessFilter | None) -> bool:
        """Whether ``assistant`` passes ``access``."""
        if access is None:
            return True
        return await self.docs.get(KIND, assistant["assistant_id"], access=access) is not None

    def _query(self, req: AssistantCount, access: AccessFilter | None) -> DocQuery:
        if req.graph_id is not None:
            self._check_graph(req.graph_id)
        return DocQuery(graph_id=req.graph_id, metadata=req.metadata or None,
                        name_contains=req.name or None, access=access)

    async def search(self, req: AssistantSearch, access: AccessFilter | None = None,
                     ) -> tuple[list[dict[str, Any]], int, int, int]:
        """``POST /assistants/search``: ``(page, total, offset, limit)``."""
        items, total, offset, limit = await search_page(self.docs, KIND, self._query(req, access), req)
        if req.select:
            items = [{k: d.get(k) for k in req.select} for d in items]
        return items, total, offset, limit

    async def count(self, req: AssistantCount, access: AccessFilter | None = None) -> int:
        """``POST /assistants/count``."""
        return await self.docs.count(KIND, self._query(req, access))

    async def patch(self, assistant_id: str, req: AssistantPatch, access: AccessFilter | None = None,
                    ) -> dict[str, Any]:
        """``PATCH /assistants/{id}``: change graph, config, context, metadata, name, description.

        The result is a new version (the highest stored plus one); the old one stays stored."""
        graph_id = req.graph_id
        if graph_id is not None:
            self._check_graph(graph_id)
        config, context, metadata = as_dict(req.config), req.context, req.metadata
        name, description = req.name, req.description

        async def change(doc: dict[str, Any]) -> None:
            stored = await self.docs.list(VERSION_KIND, thread_id=assistant_id)
            top = max([int(d.get("version") or 0) for d in stored] + [int(doc.get("version") or 1)])
            if graph_id is not None:
                doc["graph_id"] = graph_id
            if config is not None:
                doc["config"] = config
                doc["context"] = _mirror_context(config, context)
            elif context is not None:
                doc["context"] = context
            if metadata is not None:
                doc["metadata"] = {**(doc.get("metadata") or {}), **metadata}
            if name is not None:
                doc["name"] = name
            if description is not None:
                doc["description"] = description
            doc["version"] = top + 1
            doc["updated_at"] = now_iso()

        current = await self.get(assistant_id, access)
        await self._keep_version(current, current.get("updated_at") or now_iso(), replace=False)
        updated = await self.docs.update(KIND, assistant_id, change)
        if updated is None:
            raise ApiError(404, f"Assistant '{assistant_id}' not found.")
        await self._keep_version(updated, updated["updated_at"])
        return updated

    async def _keep_version(self, doc: dict[str, Any], created_at: str, *, replace: bool = True) -> None:
        version_id = f"{doc['assistant_id']}:{int(doc.get('version') or 1)}"
        record = _version_doc(doc, created_at)
        if replace:
            await self.docs.put(VERSION_KIND, version_id, record, thread_id=doc["assistant_id"])
        else:  # an assistant stored before versions were kept: its current version, once
            await self.docs.insert(VERSION_KIND, version_id, record, thread_id=doc["assistant_id"])

    async def versions(self, assistant_id: str, *, metadata: dict[str, Any] | None = None, limit: int = 10,
                       offset: int = 0, access: AccessFilter | None = None) -> list[dict[str, Any]]:
        """``POST /assistants/{id}/versions``: its versions, newest first (``metadata`` filters)."""
        current = await self.get(assistant_id, access)
        await self._keep_version(current, current.get("updated_at") or now_iso(), replace=False)
        found = await self.docs.query(VERSION_KIND, DocQuery(thread_id=assistant_id, metadata=metadata or None,
                                                             limit=None, offset=0))
        found.sort(key=lambda d: int(d.get("version") or 0), reverse=True)
        return found[offset:offset + limit]

    async def set_latest(self, assistant_id: str, version: int, access: AccessFilter | None = None,
                         ) -> dict[str, Any]:
        """``POST /assistants/{id}/latest``: make ``version`` the current one."""
        current = await self.get(assistant_id, access)
        await self._keep_version(current, current.get("updated_at") or now_iso(), replace=False)
        stored = await self.docs.get(VERSION_KIND, f"{assistant_id}:{version}")
        if stored is None:
            raise ApiError(404, f"Version {version} of assistant {assistant_id} not found.")

        def change(doc: dict[str, Any]) -> None:
            for key in ("graph_id", "config", "context", "metadata", "name", "description", "version"):
                doc[key] = stored.get(key)
            doc["updated_at"] = now_iso()

        updated = await self.docs.update(KIND, assistant_id, change)
        if updated is None:
            raise ApiError(404, f"Assistant '{assistant_id}' not found.")
        return updated

    async def delete(self, assistant_id: str, access: AccessFilter | None = None) -> None:
        """``DELETE /assistants/{id}``."""
        await self.get(assistant_id, access)
        await self.docs.delete(KIND, assistant_id)
        await self.docs.delete_for_thread(VERSION_KIND, assistant_id)
