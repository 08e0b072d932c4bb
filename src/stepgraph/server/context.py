"""``ServerContext``: everything a request handler or a run needs, built once per app."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.resources import Assistants, Runs, Threads
from stepgraph.server.resources.crons import Crons
from stepgraph.server.serde import jsonable
from stepgraph.server.snapshots import interrupts_by_task
from stepgraph.server.util import now_iso

if TYPE_CHECKING:
    from stepgraph.server.graphs import GraphRegistry
    from stepgraph.server.runtime.crons import CronScheduler
    from stepgraph.server.runtime.eventlog import EventLog
    from stepgraph.server.runtime.limits import RuntimeLimits
    from stepgraph.server.runtime.metrics import RunMetrics
    from stepgraph.server.runtime.queue import RunQueue
    from stepgraph.server.runtime.service import RunService
    from stepgraph.server.runtime.threadlog import ThreadLogs
    from stepgraph.server.runtime.ttl import TtlSweeper
    from stepgraph.server.settings import ServerSettings
    from stepgraph.server.storage import Backend

__all__ = ["ServerContext"]

logger = logging.getLogger("stepgraph.server")


class ServerContext:
    """The registry, the backend, the resources and the run machinery of one server."""

    def __init__(self, settings: ServerSettings, registry: GraphRegistry, backend: Backend) -> None:
        self.settings = settings
        self.registry = registry
        self.backend = backend
        self.assistants = Assistants(backend.docs, registry)
        self.threads = Threads(backend.docs, settings.thread_ttl)
        self.runs = Runs(backend.docs)
        self.crons = Crons(backend.docs)
        self.cron_scheduler: CronScheduler
        self.limits: RuntimeLimits
        self.events: EventLog
        self.thread_logs: ThreadLogs
        self.queue: RunQueue
        self.service: RunService
        self.ttl_sweeper: TtlSweeper
        self.metrics: RunMetrics
        self.authorizer: Any = None
        """The ``server.auth.Authorizer`` when the config has ``auth`` (else ``None``)."""

    async def graph(self, graph_id: str, config: dict[str, Any] | None = None) -> Any:
        """The compiled graph of ``graph_id`` wired to the server's checkpointer and store."""
        graph = await self.registry.build(graph_id, config)
        return graph.copy(checkpointer=self.backend.saver, store=self.backend.store)

    async def thread_graph(self, thread: dict[str, Any], *, required: bool = True) -> Any:
        """The graph that runs on ``thread`` (from its metadata), or ``None`` when unknown."""
        graph_id = (thread.get("metadata") or {}).get("graph_id")
        if graph_id in self.registry:
            return await self.graph(graph_id)
        if required:
            raise ApiError(400, f"Thread {thread['thread_id']} has no graph yet: run it first "
                                "(or create it with metadata.graph_id).")
        return None

    async def refresh_thread(self, thread_id: str, *, status: str | None = None,
                             error: Any = None, graph: Any = None) -> dict[str, Any] | None:
        """Copy the thread's current values and interrupts into its record and set its status.

        Without ``status`` the status follows the state: ``interrupted`` when tasks are
        pending (an interrupt or a breakpoint), ``idle`` otherwise.
        """
        thread = await self.threads.find(thread_id)
        if thread is None:
            return None
        if graph is None:
            graph = await self.thread_graph(thread, required=False)
        snap = None
        if graph is not None:
            try:
                snap = await graph.aget_state({"configurable": {"thread_id": thread_id}})
            except Exception:  # noqa: BLE001 - state is informative here; never fail the caller
                logger.exception("reading the state of thread %s failed", thread_id)
        has_state = snap is not None and snap.created_at is not None
        if status is None:
            status = "interrupted" if has_state and snap.next else "idle"
        return await self.threads.update(
            thread_id, status=status, error=error,
            values=jsonable(snap.values) if has_state else thread.get("values"),
            interrupts=interrupts_by_task(snap) if has_state else {},
            state_updated_at=now_iso(),
        )
