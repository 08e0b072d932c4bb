"""Creating, cancelling, joining and recovering runs (the logic behind the runs routes)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from stepgraph.server.auth.guard import AUTH_CONFIG_KEYS, run_auth_configurable
from stepgraph.server.auth.runs import authorize_run
from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.eventlog import RunLog
from stepgraph.server.runtime.locks import KeyedLocks
from stepgraph.server.runtime.queue import RunJob
from stepgraph.server.runtime.recovery import recover_runs
from stepgraph.server.runtime.request import RunRequest, parse_run_request
from stepgraph.server.runtime.webhooks import check_webhook
from stepgraph.server.schemas.runs import RunCreate
from stepgraph.server.serde import dumps
from stepgraph.server.util import now_iso, uuid7

if TYPE_CHECKING:
    from stepgraph.server.auth.authorizer import RequestAuth
    from stepgraph.server.context import ServerContext
    from stepgraph.server.storage.filters import AccessFilter

__all__ = ["RunService"]

logger = logging.getLogger("stepgraph.server")

_BUSY = "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."


def _sanitize_configurable(configurable: dict[str, Any]) -> dict[str, Any]:
    """Client keys minus the engine's internals (RemoteGraph leaks ``__pregel_*`` ones) and
    the authenticated user's keys, which only the server sets."""
    return {k: v for k, v in configurable.items()
            if not k.startswith("__pregel_") and k not in ("thread_id", "checkpoint_map")
            and k not in AUTH_CONFIG_KEYS}


class RunService:
    """Run lifecycle on top of the queue, the event log and the stored records."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self._locks = KeyedLocks()

    # -- creation -----------------------------------------------------------------------------
    async def create(self, thread_id: str | None, body: dict[str, Any] | RunCreate, *,
                     protocol: str | None = None, auth: RequestAuth | None = None,
                     headers: dict[str, str] | None = None, answers: list[str] | None = None) -> RunJob:
        """Validate, apply ``if_not_exists`` and ``multitask_strategy``, store and queue a run.

        ``protocol="v3"`` marks a run started by a v3 command: its events also go to the
        thread's event log (``runtime.protocol``). ``auth`` (the requesting user) runs the
        ``create_run`` authorization (``server.auth.runs``) and puts the user in the run's
        config. ``headers`` (``http.configurable_headers``' pick of the request's) go into the
        run's ``configurable`` over the client's keys. ``answers``: the interrupt ids a v3 run
        answers (stored with the run, so every process sees them claimed).
        """
        ctx = self.ctx
        req = parse_run_request(body)
        await check_webhook(ctx.settings.webhooks, req.webhook)
        if (req.config.get("configurable") or {}) and req.context:
            raise ApiError(400, "Cannot specify both configurable and context. Prefer setting context alone."
                                " Context was introduced in LangGraph 0.6.0 and is the long term planned"
                                " replacement for configurable.")
        if thread_id is None and req.command and req.command.get("resume") is not None:
            raise ApiError(400, "You must provide a thread_id when resuming.")
        assistant = await ctx.assistants.resolve(req.assistant_id)
        run_id = uuid7()
        if auth is not None:
            req = await authorize_run(ctx, auth, req, body, thread_id, assistant, run_id)
        tags = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
        new_meta = {**tags, **(req.config.get("metadata") or {}), **req.metadata, **tags}
        temporary = False
        if thread_id is None:
            thread_id = uuid7()
            temporary = req.on_completion == "delete"
            await ctx.threads.ensure(thread_id, new_meta)
        elif await ctx.threads.find(thread_id) is None:
            if req.if_not_exists != "create":
                raise ApiError(404, "Thread or assistant not found.")
            await ctx.threads.ensure(thread_id, new_meta)
        job = await self._admit(req, assistant, thread_id, temporary, run_id, auth, protocol, headers, answers)
        await ctx.threads.update(thread_id, merge_metadata=tags)
        return job

    async def _admit(self, req: RunRequest, assistant: dict[str, Any], thread_id: str, temporary: bool,
                     run_id: str, auth: RequestAuth | None, protocol: str | None,
                     headers: dict[str, str] | None = None, answers: list[str] | None = None) -> RunJob:
        """Apply the multitask strategy, store and queue the run (a cluster overrides this)."""
        ctx = self.ctx
        # Admission is atomic per thread and waits for nothing else: an interrupted run stops
        # in the background, and the queue starts the new run only once it has stopped.
        async with self._locks.hold(thread_id):
            active = ctx.queue.active(thread_id)
            if active and req.multitask_strategy == "reject":
                raise ApiError(409, _BUSY)
            if active and req.multitask_strategy in ("interrupt", "rollback"):
                for job in active:
                    ctx.queue.cancel(job, req.multitask_strategy)
            run = self._run_doc(req, assistant, thread_id, temporary, run_id=run_id, auth=auth, headers=headers,
                                protocol=protocol, answers=answers)
            await ctx.runs.insert(run)
            return self._submit(run, temporary)

    def _submit(self, run: dict[str, Any], temporary: bool) -> RunJob:
        log = self.ctx.events.open(run["run_id"], resumable=bool(run["kwargs"].get("resumable")))
        log.append("metadata", dumps({"run_id": run["run_id"], "attempt": int(run.get("_attempt") or 1)}))
        job = RunJob(run=run, log=log, temporary=temporary)
        metrics = getattr(self.ctx, "metrics", None)
        if metrics is not None:
            metrics.run_created(str((run.get("metadata") or {}).get("graph_id")))
        self.ctx.queue.submit(job)
        return job

    def _run_doc(self, req: RunRequest, assistant: dict[str, Any], thread_id: str, temporary: bool, *,
                 run_id: str | None = None, auth: RequestAuth | None = None,
                 headers: dict[str, str] | None = None, protocol: str | None = None,
                 answers: list[str] | None = None) -> dict[str, Any]:
        run_id = run_id or uuid7()
        a_config = assistant.get("config") or {}
        configurable = {**_sanitize_configurable(a_config.get("configurable") or {}),
                        **_sanitize_configurable(req.config.get("configurable") or {}),
                        **_sanitize_configurable(headers or {})}
        checkpoint = req.checkpoint or {}
        if checkpoint.get("checkpoint_ns"):
            configurable["checkpoint_ns"] = checkpoint["checkpoint_ns"]
        checkpoint_id = req.checkpoint_id or checkpoint.get("checkpoint_id")
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        ids = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
        user_id = (configurable.get("user_id") or auth.identity) if auth is not None else ""
        configurable.update(run_id=run_id, thread_id=thread_id, user_id=user_id, **ids,
                            **run_auth_configurable(auth))
        metadata = {**(a_config.get("metadata") or {}), **(req.config.get("metadata") or {}),
                    **req.metadata, **ids, "run_attempt": 1}
        config: dict[str, Any] = {k: v for k, v in a_config.items() if k not in ("configurable", "metadata")}
        config.update({k: v for k, v in req.config.items() if k not in ("configurable", "metadata")})
        config.update(configurable=configurable, metadata=metadata)
        context = req.context or (assistant.get("context") or None)
        now = now_iso()
        extra: dict[str, Any] = {}
        if protocol is not None:
            extra["protocol"] = protocol
        if answers:
            extra["answers"] = sorted(answers)
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
                "after_seconds": req.after_seconds, "on_disconnect": req.on_disconnect, **extra,
            },
            "multitask_strategy": req.multitask_strategy, "created_at": now, "updated_at": now,
            "_not_before": time.time() + req.after_seconds,
        }

    # -- views of the thread's runs (the same questions a cluster answers from Postgres) -------
    async def active_runs(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's pending and running runs (their records), in the order they run."""
        return [{**job.run, "status": "running" if job.started else "pending"}
                for job in self.ctx.queue.active(thread_id)]

    async def busy(self, thread_id: str) -> bool:
        """Whether a run of the thread is pending or running (in any process of a cluster)."""
        return bool(await self.active_runs(thread_id))

    async def thread_runs(self, thread_id: str, heartbeat: float) -> AsyncIterator[tuple[Any, bool] | None]:
        """The runs of a thread to follow one after the other (``GET /threads/{id}/stream``):
        ``(log, live)`` for those active now (a running one followed ``live``, from now),
        then for each run submitted later (from its start); ``None`` after ``heartbeat`` s
        without a new run."""
        queue = self.ctx.queue
        incoming = queue.subscribe(thread_id)
        try:
            for job in queue.active(thread_id):
                yield job.log, job.started
            while True:
                try:
                    job = await asyncio.wait_for(incoming.get(), heartbeat)
                except TimeoutError:
                    yield None
                    continue
                yield job.log, False
        finally:
            queue.unsubscribe(thread_id, incoming)

    def cancel_detached(self, run_id: str, action: str = "interrupt") -> None:
        """Cancel a run from a callback (a client disconnected); nothing when it is not active."""
        job = self.ctx.queue.job(run_id)
        if job is not None:
            self.ctx.queue.cancel(job, action)

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
                          status: str | None, action: str, access: AccessFilter | None = None) -> int:
        """``POST /runs/cancel``: by thread and ids, or every run with ``status`` (only runs
        on threads that pass ``access``, the auth handler's filter)."""
        jobs = self.ctx.queue.active(thread_id)
        if access is not None:
            visible = {t for t in {j.thread_id for j in jobs}
                       if await self.ctx.threads.find(t, access) is not None}
            jobs = [j for j in jobs if j.thread_id in visible]
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
        if latest.get("status") == "error":
            error = latest.get("error") or thread.get("error")
            if error:
                return {"__error__": error}
        return thread.get("values")

    def stream_plan(self, run: dict[str, Any], after: tuple[int, int] | None
                    ) -> tuple[RunLog | None, tuple[int, int] | None, bool]:
        """What a ``join_stream`` follows: ``(log, after, live)``.

        ``Last-Event-ID`` (``after``) replays a resumable run's events after it; without it
        the stream follows from now. Raises 410 when the client asks to replay events no
        longer kept. A finished run that failed and whose log is gone answers its ``error``.
        """
        log = self.ctx.events.get(run["run_id"])
        if log is not None:
            if after is not None and not log.resumable:
                after = None
            if after is not None and log.missed(after):
                raise ApiError(410, f"Events of run {run['run_id']} up to id {log.evicted_event().id} were dropped "
                                    f"from the server's stream buffer; join the run or read the thread's state.")
            return log, after, after is None
        if run.get("status") == "error" and run.get("error"):
            log = RunLog(run["run_id"], resumable=False)
            log.append("error", dumps(run["error"]))
            log.close()
            return log, None, False
        if after is not None and run.get("status") not in ("pending", "running") \
                and (run.get("kwargs") or {}).get("resumable"):
            raise ApiError(410, f"The events of run {run['run_id']} are no longer kept (the run finished and its "
                                f"stream buffer was evicted, or the server restarted); join the run or read the "
                                f"thread's state.")
        return None, after, after is None

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
        await self.ctx.crons.delete_thread(thread_id)
        await self.ctx.threads.delete(thread_id)
        self.ctx.thread_logs.discard(thread_id)

    # -- startup ------------------------------------------------------------------------------
    async def recover(self) -> None:
        """After a restart: resume, re-run or fail what the previous process left (``recovery``)."""
        runs = await recover_runs(self.ctx, self.ctx.limits.max_attempts)
        for run in runs:
            self._submit(run, bool(run["kwargs"].get("temporary")))
        if runs:
            logger.info("re-queued %d run(s)", len(runs))
