"""Creating, cancelling, joining and recovering runs (the logic behind the runs routes)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.runtime.request import RunRequest, parse_run_request
from stepgraph.server.schemas.runs import RunCreate
from stepgraph.server.serde import dumps
from stepgraph.server.util import now_iso, uuid7

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["RunService"]

logger = logging.getLogger("stepgraph.server")

_BUSY = "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."


def _sanitize_configurable(configurable: dict[str, Any]) -> dict[str, Any]:
    """Client keys minus the engine's internals (RemoteGraph leaks ``__pregel_*`` ones)."""
    return {k: v for k, v in configurable.items()
            if not k.startswith("__pregel_") and k not in ("thread_id", "checkpoint_map")}


class RunService:
    """Run lifecycle on top of the queue, the event log and the stored records."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self._lock = asyncio.Lock()

    # -- creation -----------------------------------------------------------------------------
    async def create(self, thread_id: str | None, body: dict[str, Any] | RunCreate, *,
                     protocol: str | None = None) -> RunJob:
        """Validate, apply ``if_not_exists`` and ``multitask_strategy``, store and queue a run.

        ``protocol="v3"`` marks a run started by a v3 command: its events also go to the
        thread's event log (``runtime.protocol``).
        """
        ctx = self.ctx
        req = parse_run_request(body)
        if (req.config.get("configurable") or {}) and req.context:
            raise ApiError(400, "Cannot specify both configurable and context. Prefer setting context alone."
                                " Context was introduced in LangGraph 0.6.0 and is the long term planned"
                                " replacement for configurable.")
        if thread_id is None and req.command and req.command.get("resume") is not None:
            raise ApiError(400, "You must provide a thread_id when resuming.")
        assistant = await ctx.assistants.resolve(req.assistant_id)
        tags = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
        temporary = False
        if thread_id is None:
            thread_id = uuid7()
            temporary = req.on_completion == "delete"
            await ctx.threads.ensure(thread_id, dict(tags))
        elif await ctx.threads.find(thread_id) is None:
            if req.if_not_exists != "create":
                raise ApiError(404, "Thread or assistant not found.")
            await ctx.threads.ensure(thread_id, dict(tags))
        async with self._lock:
            active = ctx.queue.active(thread_id)
            if active and req.multitask_strategy == "reject":
                raise ApiError(409, _BUSY)
            if active and req.multitask_strategy in ("interrupt", "rollback"):
                for job in active:
                    ctx.queue.cancel(job, req.multitask_strategy)
                await asyncio.gather(*(job.done.wait() for job in active))
            run = self._run_doc(req, assistant, thread_id, temporary)
            if protocol is not None:
                run["kwargs"]["protocol"] = protocol
            await ctx.runs.insert(run)
            await ctx.threads.update(thread_id, merge_metadata=tags)
            return self._submit(run, temporary)

    def _submit(self, run: dict[str, Any], temporary: bool) -> RunJob:
        log = self.ctx.events.open(run["run_id"], resumable=bool(run["kwargs"].get("resumable")))
        log.append("metadata", dumps({"run_id": run["run_id"], "attempt": 1}))
        job = RunJob(run=run, log=log, temporary=temporary)
        self.ctx.queue.submit(job)
        return job

    def _run_doc(self, req: RunRequest, assistant: dict[str, Any], thread_id: str, temporary: bool) -> dict[str, Any]:
        run_id = uuid7()
        a_config = assistant.get("config") or {}
        configurable = {**(a_config.get("configurable") or {}),
                        **_sanitize_configurable(req.config.get("configurable") or {})}
        checkpoint = req.checkpoint or {}
        if checkpoint.get("checkpoint_ns"):
            configurable["checkpoint_ns"] = checkpoint["checkpoint_ns"]
        checkpoint_id = req.checkpoint_id or checkpoint.get("checkpoint_id")
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        ids = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
        configurable.update(run_id=run_id, thread_id=thread_id, user_id="", **ids)
        metadata = {**(a_config.get("metadata") or {}), **(req.config.get("metadata") or {}),
                    **req.metadata, **ids, "run_attempt": 1}
        config: dict[str, Any] = {k: v for k, v in a_config.items() if k not in ("configurable", "metadata")}
        config.update({k: v for k, v in req.config.items() if k not in ("configurable", "metadata")})
        config.update(configurable=configurable, metadata=metadata)
        context = req.context or (assistant.get("context") or None)
        now = now_iso()
        return {
            "run_id": run_id, "thread_id": thread_id, "assistant_id": assistant["assistant_id"],
            "metadata": {**req.metadata, **ids}, "status": "pending",
            "kwargs": {
                "input": req.input, "command": req.command, "config": config, "context": context,
                "stream_mode": req.stream_mode, "interrupt_before": req.interrupt_before,
                "interrupt_after": req.interrupt_after, "webhook": req.webhook,
                "feedback_keys": req.feedback_keys, "temporary": temporary,
                "subgraphs": req.stream_subgraphs, "resumable": req.stream_resumable,
                "checkpoint_during": req.durability != "exit", "durability": req.durability,
                "after_seconds": req.after_seconds, "on_disconnect": req.on_disconnect,
            },
            "multitask_strategy": req.multitask_strategy, "created_at": now, "updated_at": now,
        }

    # -- cancel / join ------------------------------------------------------------------------
    async def cancel(self, thread_id: str | None, run_id: str, *, action: str = "interrupt", wait: bool = False) -> None:
        """Cancel an active run (404 when it does not exist or already finished)."""
        await self.ctx.runs.get(thread_id, run_id)
        job = self.ctx.queue.job(run_id)
        if job is None or job.done.is_set():
            raise ApiError(404, "No runs found to cancel.")
        self.ctx.queue.cancel(job, action)
        if wait:
            await job.done.wait()

    async def cancel_many(self, *, thread_id: str | None, run_ids: list[str] | None,
                          status: str | None, action: str) -> int:
        """``POST /runs/cancel``: by thread and ids, or every run with ``status``."""
        jobs = self.ctx.queue.active(thread_id)
        if run_ids is not None:
            wanted = set(run_ids)
            jobs = [j for j in jobs if j.run_id in wanted]
        if status in ("pending", "running"):
            jobs = [j for j in jobs if j.status == status]
        for job in jobs:
            self.ctx.queue.cancel(job, action)
        return len(jobs)

    async def outcome(self, run: dict[str, Any]) -> Any:
        """What ``wait``/``join`` return: final values (+ ``__interrupt__``) or ``{"__error__"}``."""
        job = self.ctx.queue.job(run["run_id"])
        if job is not None:
            await job.done.wait()
            if job.result is not None:
                return job.result
        thread = await self.ctx.threads.find(run["thread_id"]) or {}
        latest = await self.ctx.runs.find(run["run_id"]) or run
        if latest.get("status") == "error" and thread.get("error"):
            return {"__error__": thread["error"]}
        return thread.get("values")

    # -- threads ------------------------------------------------------------------------------
    async def delete_thread_data(self, thread_id: str, *, keep_job: RunJob | None = None) -> None:
        """Cancel the thread's runs, then delete its runs, checkpoints and record."""
        active = [j for j in self.ctx.queue.active(thread_id) if j is not keep_job]
        for job in active:
            self.ctx.queue.cancel(job, "interrupt")
        if active:
            await asyncio.gather(*(j.done.wait() for j in active))
        await self.ctx.backend.saver.adelete_thread(thread_id)
        await self.ctx.runs.delete_thread(thread_id)
        await self.ctx.threads.delete(thread_id)
        self.ctx.thread_logs.discard(thread_id)

    # -- startup ------------------------------------------------------------------------------
    async def recover(self) -> None:
        """After a restart: runs left ``running`` failed; ``pending`` ones are queued again."""
        ctx = self.ctx
        runs = await ctx.runs.all()
        for run in runs:
            if run.get("status") == "running":
                await ctx.runs.set_status(run["run_id"], "error")
        for thread in await ctx.threads.all():
            if thread.get("status") == "busy":
                await ctx.refresh_thread(thread["thread_id"])
        pending = sorted((r for r in runs if r.get("status") == "pending"), key=lambda r: r.get("created_at") or "")
        for run in pending:
            if run.get("metadata", {}).get("graph_id") not in ctx.registry:
                await ctx.runs.set_status(run["run_id"], "error")
                continue
            self._submit(run, bool(run["kwargs"].get("temporary")))
        if pending:
            logger.info("re-queued %d pending run(s)", len(pending))
