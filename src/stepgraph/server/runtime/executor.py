"""Executing one run: stream the graph into the run's event log, then record the outcome.

Statuses follow the LangGraph server: the run goes ``pending`` -> ``running`` ->
``success`` (also when it stopped at an interrupt) / ``error`` / ``interrupted``
(cancelled); the thread is ``busy`` while it runs and afterwards ``error``,
``interrupted`` (tasks pending: an interrupt, a breakpoint, or a cancelled step) or
``idle``. The terminal statuses are written *before* the event log closes, so a client
that checks the run right after its stream ends sees the final status. A run started by a
v3 command also writes protocol events to its thread's event log (``protocol.py``); its
terminal lifecycle event follows the final statuses too.

A cancelled run has stopped only when no code of it runs any more: a sync node on a worker
thread cannot be interrupted, so the executor waits for the threads the run started
(``engine.pool.watch_threads``) before it records ``interrupted`` and frees the thread for
the next run (except at server shutdown). A run resumed after a crash (``_resume``,
``recovery.py``) continues from its thread's last checkpoint with no input.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, get_type_hints

from stepgraph.engine.pool import ThreadWatch, watch_threads
from stepgraph.server.auth.guard import with_auth_user
from stepgraph.server.checkpoints import drop_run_checkpoints
from stepgraph.server.errors import run_error_payload
from stepgraph.server.runtime.lcevents import CallbackEvents
from stepgraph.server.runtime.otel import run_tracing
from stepgraph.server.runtime.protocol import ENGINE_MODES as PROTOCOL_MODES
from stepgraph.server.runtime.protocol import ProtocolEmitter, subgraph_names
from stepgraph.server.runtime.webhooks import deliver_webhook
from stepgraph.server.runtime.wire import WireEmitter, engine_modes
from stepgraph.server.serde import jsonable

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext
    from stepgraph.server.runtime.queue import RunJob

__all__ = ["RunExecutor", "build_input"]

logger = logging.getLogger("stepgraph.server")


def _send(value: Any) -> Any:
    from stepgraph.types import Send

    if isinstance(value, dict) and "node" in value:
        return Send(value["node"], value.get("input", value.get("arg")))
    return value


def build_input(kwargs: dict[str, Any]) -> Any:
    """The engine input of a run: its ``input``, or a ``Command`` built from ``command``."""
    command = kwargs.get("command")
    if not command:
        return kwargs.get("input")
    from stepgraph.types import Command

    goto = command.get("goto")
    if isinstance(goto, list):
        goto = tuple(_send(g) for g in goto)
    elif goto is not None:
        goto = _send(goto)
    update = command.get("update")
    if isinstance(update, list):
        update = [tuple(u) if isinstance(u, list) else u for u in update]
    return Command(update=update, resume=command.get("resume"), goto=goto or ())


def _context_keys(schema: Any) -> set[str] | None:
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict):
        return set(fields)
    try:
        return set(get_type_hints(schema))
    except Exception:  # noqa: BLE001 - unknown schema kind: keep everything
        return None


def resolve_context(graph: Any, context: Any, configurable: dict[str, Any]) -> Any:
    """The run's context: the given one, else the configurable keys the schema knows."""
    schema = getattr(graph, "context_schema", None)
    if context:
        return context
    if schema is None:
        return None
    keys = _context_keys(schema)
    if not keys:
        return None
    picked = {k: v for k, v in configurable.items() if k in keys}
    return picked or None


class RunExecutor:
    """Runs jobs for the queue."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self._background: set[asyncio.Task[None]] = set()

    async def __call__(self, job: RunJob) -> None:
        ctx, run = self.ctx, job.run
        kw = run["kwargs"]
        graph_id = run["metadata"]["graph_id"]
        modes = kw.get("stream_mode") or ["values"]
        events = CallbackEvents(graph_id, job.run_id, kw["config"].get("metadata")) if "events" in modes else None
        emitter = WireEmitter(job.log, modes, subgraphs=bool(kw.get("subgraphs")), events=events)
        proto = None
        if kw.get("protocol") == "v3":
            proto = ProtocolEmitter(ctx.thread_logs.open(job.thread_id), job.run_id, graph_id)
        status, error, graph = "success", None, None
        failure: BaseException | None = None
        tracing = run_tracing(run)
        watch: ThreadWatch | None = None
        metrics = getattr(ctx, "metrics", None)
        if metrics is not None:
            metrics.run_started(job.run_id, graph_id, max(job.not_before, job.submitted_at))
        try:
            job.status = "running"
            await self.mark_running(job)
            if proto is not None:
                proto.start()
            config = with_auth_user(kw["config"])  # the stored user becomes a user object again
            graph_input = build_input(kw)
            if run.get("_resume"):  # cut by a crash after committing steps: continue from there
                graph_input = None
                configurable = {k: v for k, v in (config.get("configurable") or {}).items() if k != "checkpoint_id"}
                config = {**config, "configurable": configurable}
            graph = await ctx.graph(graph_id, config)
            stream_modes = engine_modes(emitter.wire)
            if tracing is not None and "tasks" not in stream_modes:
                stream_modes.append("tasks")  # node spans (the emitter sends only what was asked)
            if proto is not None:
                proto.subgraph_names = subgraph_names(graph)
                stream_modes += [m for m in PROTOCOL_MODES if m not in stream_modes]
            stream = graph.astream(
                graph_input, config, stream_mode=stream_modes,
                subgraphs=emitter.engine_subgraphs or proto is not None,
                interrupt_before=kw.get("interrupt_before"),
                interrupt_after=kw.get("interrupt_after"), durability=kw.get("durability") or "async",
                context=resolve_context(graph, kw.get("context"), config.get("configurable") or {}),
            )
            emitter.start(kw.get("input"))
            with watch_threads() as watch:
                async with contextlib.aclosing(stream):
                    async for part in stream:
                        if tracing is not None:
                            tracing.feed(part)
                        emitter.handle(part)
                        if proto is not None:
                            proto.handle(part)
            emitter.end()
        except asyncio.CancelledError:
            status = "interrupted"
            await self._stopped(job, watch)
        except Exception as exc:  # noqa: BLE001 - any failure of the graph ends the run
            status, error, failure = "error", run_error_payload(exc), exc
            emitter.emit("error", error)
            if not isinstance(exc, (ValueError, TypeError, KeyError)):
                logger.info("run %s failed: %s: %s", job.run_id, type(exc).__name__, exc)
        if tracing is not None:
            tracing.finish(status, failure)
        finishing = asyncio.ensure_future(self._finish(job, emitter, status, error, graph, proto))
        while not finishing.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(finishing)

    async def mark_running(self, job: RunJob) -> None:
        """Record that the run started: the run ``running``, its thread ``busy``."""
        await self.ctx.runs.set_status(job.run_id, "running")
        await self.ctx.threads.update(job.thread_id, status="busy")

    async def _stopped(self, job: RunJob, watch: ThreadWatch | None) -> None:
        """Wait until the sync nodes the cancelled run started have returned (not at shutdown)."""
        while watch is not None and watch.running and not job.abandoned:
            with contextlib.suppress(asyncio.CancelledError):
                await watch.settled()

    async def _finish(self, job: RunJob, emitter: WireEmitter, status: str, error: Any, graph: Any,
                      proto: ProtocolEmitter | None = None) -> None:
        ctx = self.ctx
        try:
            if error is not None:
                job.result = {"__error__": error}
            else:
                job.result = jsonable(emitter.last_values, stream=True)
            if status == "interrupted" and job.cancel_action == "rollback":
                await self._rollback(job)
            else:
                await ctx.runs.set_status(job.run_id, status, **({"error": error} if error is not None else {}))
                queued = any(j is not job for j in ctx.queue.active(job.thread_id))
                await ctx.refresh_thread(job.thread_id, status="busy" if queued else "error" if error else None,
                                         error=error, graph=graph)
            job.status = status
            if job.temporary:
                await ctx.service.delete_thread_data(job.thread_id, keep_job=job)
        except Exception:  # noqa: BLE001 - bookkeeping must not hide the run's outcome
            logger.exception("finishing run %s failed", job.run_id)
        finally:
            if proto is not None:
                proto.finish(status, error)
            ctx.events.close(job.run_id)
            self._count_finished(job, status)
        webhook = job.run["kwargs"].get("webhook")
        if webhook:
            task = asyncio.get_running_loop().create_task(deliver_webhook(ctx, webhook, job))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _rollback(self, job: RunJob) -> None:
        ctx = self.ctx
        await drop_run_checkpoints(ctx.backend.saver, job.thread_id, job.run_id)
        await ctx.runs.delete(job.run_id)
        await ctx.refresh_thread(job.thread_id)
        job.result = None

    async def cancel_pending(self, job: RunJob) -> None:
        """A queued job is dropped before it started (or left for the next start on shutdown)."""
        ctx = self.ctx
        action = job.cancel_action
        try:
            if action == "shutdown":
                return
            if action == "rollback":
                await ctx.runs.delete(job.run_id)
            else:
                await ctx.runs.set_status(job.run_id, "interrupted")
            job.status = "interrupted"
            self._count_finished(job, "interrupted")
            if job.temporary:
                await ctx.service.delete_thread_data(job.thread_id, keep_job=job)
        finally:
            ctx.events.close(job.run_id)

    def _count_finished(self, job: RunJob, status: str) -> None:
        metrics = getattr(self.ctx, "metrics", None)
        if metrics is not None:
            metrics.run_finished(job.run_id, str((job.run.get("metadata") or {}).get("graph_id")), status)
