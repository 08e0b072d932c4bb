"""Crons: a schedule, an assistant, an optional thread and the run payload each firing starts.

A cron record holds what LangGraph's API shows (``cron_id``, ``assistant_id``, ``thread_id``,
``user_id``, ``schedule``, ``timezone``, ``end_time``, ``payload``, ``next_run_date``,
``metadata``, ``on_run_completed``, ``enabled``, times) and, under ``_auth``, the creating
user's identity and permissions so its runs are authorized as that user's. Its
``next_run_date`` is also an indexed column: a firing is claimed by moving it to the next
occurrence with a compare-and-swap (``DocStore.swap``), so of several schedulers (a restarted
server, two processes on one database) exactly one starts each firing.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.resources.common import search_page
from stepgraph.server.runtime.cronspec import (
    check_schedule,
    check_timezone,
    next_run,
    parse_time,
    utc_text,
)
from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.storage.filters import AccessFilter, DocQuery
from stepgraph.server.util import is_uuid, now_iso

if TYPE_CHECKING:
    from stepgraph.server.schemas.crons import CronCount, CronCreate, CronPatch, CronSearch
    from stepgraph.server.storage import DocStore

__all__ = ["RUN_KEYS", "Crons", "public"]

KIND = "cron"
RUN_KEYS = ("input", "metadata", "config", "context", "checkpoint_during", "interrupt_before",
            "interrupt_after", "webhook", "stream_mode", "stream_subgraphs", "stream_resumable", "durability",
            "multitask_strategy")
"""Fields of a cron body that go into its ``payload`` (and so into each firing's run)."""
_NEXT = "state_updated_at"
"""The column holding a cron's ``next_run_date`` (``storage.records.CRON_COLUMNS``)."""


def public(doc: dict[str, Any]) -> dict[str, Any]:
    """A cron as the API shows it (internal ``_`` fields left out)."""
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def _utc(value: str | None) -> datetime | None:
    return parse_time(value) if value is not None else None


class Crons:
    """Stored crons."""

    def __init__(self, docs: DocStore) -> None:
        self.docs = docs

    async def create(self, req: CronCreate, *, assistant_id: str, thread_id: str | None,
                     auth: dict[str, Any] | None = None) -> dict[str, Any]:
        """A new cron for ``assistant_id`` (resolved), on ``thread_id`` or stateless."""
        schedule = check_schedule(req.schedule)
        check_timezone(req.timezone)
        end_time = _utc(req.end_time)
        cron_id = str(uuid.uuid4())
        sent = as_dict(req) or {}
        payload: dict[str, Any] = {"assistant_id": assistant_id, "schedule": schedule}
        payload.update({k: sent[k] for k in RUN_KEYS if sent.get(k) is not None})
        config = dict(payload.get("config") or {})
        config["configurable"] = {**(config.get("configurable") or {}), "cron_id": cron_id}
        payload["config"] = config
        now = now_iso()
        enabled = req.enabled if req.enabled is not None else True
        doc = {
            "cron_id": cron_id, "assistant_id": assistant_id, "thread_id": thread_id,
            "user_id": (auth or {}).get("identity", ""), "end_time": utc_text(end_time),
            "schedule": schedule, "timezone": req.timezone, "payload": payload,
            "next_run_date": utc_text(next_run(schedule, req.timezone, datetime.now(UTC), end_time)),
            "metadata": req.metadata or {},
            "on_run_completed": None if thread_id is not None else (req.on_run_completed or "delete"),
            "enabled": enabled, "created_at": now, "updated_at": now,
        }
        if auth is not None:
            doc["_auth"] = auth
        await self.docs.insert(KIND, cron_id, doc, thread_id=thread_id)
        return doc

    async def get(self, cron_id: str, access: AccessFilter | None = None) -> dict[str, Any]:
        """A cron by id (404 when unknown or not visible)."""
        doc = await self.docs.get(KIND, cron_id, access=access) if is_uuid(cron_id) else None
        if doc is None:
            raise ApiError(404, f"Cron {cron_id} not found")
        return doc

    def _query(self, req: CronCount, access: AccessFilter | None) -> DocQuery:
        if req.assistant_id is not None and not is_uuid(req.assistant_id):
            raise ApiError(422, "Invalid assistant ID: must be a UUID")
        enabled = None if req.enabled is None else ("enabled" if req.enabled else "disabled")
        return DocQuery(graph_id=req.assistant_id, thread_id=req.thread_id or None, status=enabled,
                        metadata=req.metadata or None, access=access)

    async def search(self, req: CronSearch, access: AccessFilter | None = None,
                     ) -> tuple[list[dict[str, Any]], int, int, int]:
        """``POST /runs/crons/search``: ``(page, total, offset, limit)``."""
        items, total, offset, limit = await search_page(self.docs, KIND, self._query(req, access), req)
        items = [public(d) for d in items]
        if req.select:
            now = now_iso()
            items = [{k: (now if k == "now" else d.get(k)) for k in req.select} for d in items]
        return items, total, offset, limit

    async def count(self, req: CronCount, access: AccessFilter | None = None) -> int:
        """``POST /runs/crons/count``."""
        return await self.docs.count(KIND, self._query(req, access))

    async def patch(self, cron_id: str, req: CronPatch, access: AccessFilter | None = None) -> dict[str, Any]:
        """``PATCH /runs/crons/{cron_id}``: change the schedule, the payload, ``enabled``...

        The next run is computed again from now when the schedule, time zone, end time or
        ``enabled`` changes. The write is a compare-and-swap on the next run date, so a firing
        claimed meanwhile is never undone (the patch is applied again on the new record).
        """
        sent = as_dict(req) or {}
        if req.schedule is not None:
            check_schedule(req.schedule)
        check_timezone(req.timezone)
        for _ in range(20):
            doc = await self.get(cron_id, access)
            expected = doc.get("next_run_date")
            self._apply(doc, req, sent)
            if await self.docs.swap(KIND, cron_id, doc, column=_NEXT, expected=expected):
                return doc
        raise ApiError(409, f"Cron {cron_id} is being changed concurrently; try again.")

    @staticmethod
    def _apply(doc: dict[str, Any], req: CronPatch, sent: dict[str, Any]) -> None:
        payload = dict(doc.get("payload") or {})
        reschedule = False
        if req.schedule is not None:
            doc["schedule"] = payload["schedule"] = req.schedule.strip()
            reschedule = True
        if req.timezone is not None:
            doc["timezone"] = req.timezone
            reschedule = True
        if "end_time" in req.model_fields_set:
            doc["end_time"] = utc_text(_utc(req.end_time))
            reschedule = True
        if req.enabled is not None:
            reschedule = reschedule or req.enabled != doc.get("enabled")
            doc["enabled"] = req.enabled
        if req.on_run_completed is not None and doc.get("thread_id") is None:
            doc["on_run_completed"] = req.on_run_completed
        if req.metadata is not None:
            doc["metadata"] = req.metadata
        for key in RUN_KEYS:
            if sent.get(key) is not None:
                payload[key] = sent[key]
        if sent.get("config") is not None:
            config = dict(payload["config"])
            config["configurable"] = {**(config.get("configurable") or {}), "cron_id": doc["cron_id"]}
            payload["config"] = config
        doc["payload"] = payload
        if reschedule:
            doc["next_run_date"] = utc_text(next_run(doc["schedule"], doc.get("timezone"), datetime.now(UTC),
                                                     _utc(doc.get("end_time"))))
        doc["updated_at"] = now_iso()

    async def delete(self, cron_id: str, access: AccessFilter | None = None) -> None:
        """``DELETE /runs/crons/{cron_id}``."""
        await self.get(cron_id, access)
        await self.docs.delete(KIND, cron_id)

    async def delete_for_assistant(self, assistant_id: str) -> int:
        """Delete the crons of a deleted assistant."""
        found = await self.docs.query(KIND, DocQuery(graph_id=assistant_id, fields=frozenset({"cron_id"})))
        return sum([await self.docs.delete(KIND, d["cron_id"]) for d in found])

    async def delete_thread(self, thread_id: str) -> int:
        """Delete the crons of a deleted thread."""
        return await self.docs.delete_for_thread(KIND, thread_id)

    # -- the scheduler's side -------------------------------------------------------------------
    async def due(self, now: datetime, limit: int = 100) -> list[dict[str, Any]]:
        """Enabled crons whose next run date has come, soonest first."""
        docs = await self.docs.query(KIND, DocQuery(status="enabled", sort_by="next_run_date", descending=False,
                                                    limit=limit))
        out = []
        for doc in docs:
            when = _utc(doc.get("next_run_date"))
            if when is None:
                continue
            if when > now:
                break
            out.append(doc)
        return out

    async def soonest(self) -> datetime | None:
        """The earliest next run date of an enabled cron (``None``: nothing scheduled)."""
        docs = await self.docs.query(KIND, DocQuery(status="enabled", sort_by="next_run_date", descending=False,
                                                    limit=1))
        return _utc(docs[0].get("next_run_date")) if docs else None

    async def claim(self, doc: dict[str, Any], now: datetime) -> bool:
        """Take the firing due in ``doc``: its next run date moves past ``now`` in the same
        statement that checks no one else moved it. Whether this caller won the firing."""
        expected = doc.get("next_run_date")
        claimed = dict(doc)
        claimed["next_run_date"] = utc_text(next_run(doc["schedule"], doc.get("timezone"), now,
                                                     _utc(doc.get("end_time"))))
        return await self.docs.swap(KIND, doc["cron_id"], claimed, column=_NEXT, expected=expected)
