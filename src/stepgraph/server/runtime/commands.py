"""The commands of the v3 protocol (``POST /threads/{thread_id}/commands``).

A command is ``{"id": <int>, "method": <str>, "params": {...}}``; the answer is an envelope,
always HTTP 200 once the body parsed as a command::

    {"type": "success", "id": 4, "result": {...}, "meta": {"applied_through_seq": 0}}
    {"type": "error", "id": 3, "error": "no_such_interrupt", "message": "..."}

Implemented: ``run.start`` (creates the thread when unknown; resumes an interrupted
thread with ``input`` as the resume value), ``input.respond`` (one answer, or several in
``responses``; optional ``update`` / ``goto``), ``subscription.subscribe`` /
``subscription.unsubscribe`` (accepted; SSE streams are the subscriptions) and
``agent.getTree`` (the root of the active run). Anything else is ``unknown_command``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException

from stepgraph.server.errors import ApiError
from stepgraph.server.util import is_uuid

if TYPE_CHECKING:
    from stepgraph.server.auth.authorizer import RequestAuth
    from stepgraph.server.context import ServerContext

__all__ = ["CommandError", "failure", "run_command", "success"]

RUN_MODES = ["values", "updates", "messages-tuple", "custom"]
"""The classic stream modes of a v3 run (its own run log, for ``joinStream``)."""


class CommandError(Exception):
    """A command that failed: answered as an error envelope."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def success(command_id: Any, result: Any) -> dict[str, Any]:
    """A success envelope."""
    return {"type": "success", "id": command_id, "result": result, "meta": {"applied_through_seq": 0}}


def failure(command_id: Any, code: str, message: str) -> dict[str, Any]:
    """An error envelope."""
    return {"type": "error", "id": command_id, "error": code, "message": message}


async def run_command(ctx: ServerContext, thread_id: str, command: dict[str, Any], *,
                      auth: RequestAuth | None = None) -> dict[str, Any]:
    """Execute one command on ``thread_id``; the envelope to answer.

    With ``auth``, a thread the user may not read is not found (whatever the command), and
    runs are started as that user (``create_run`` authorization).
    """
    cid, method = command["id"], command["method"]
    params = command.get("params")
    if params is None:
        params = {}
    handler = _HANDLERS.get(method)
    if handler is None:
        return failure(cid, "unknown_command", f"Unknown protocol command: {method}")
    try:
        if not isinstance(params, dict):
            raise CommandError("invalid_argument", "params must be an object.")
        if not is_uuid(thread_id):
            raise CommandError("unknown_error", "422: Invalid thread ID")
        if auth is not None:
            access = await auth.check("threads", "read", {"thread_id": thread_id})
            if access is not None and await ctx.threads.find(thread_id, access) is None \
                    and await ctx.threads.exists(thread_id):
                raise CommandError("unknown_error", f"404: Thread with ID {thread_id} not found")
        return success(cid, await handler(ctx, thread_id, params, auth))
    except CommandError as exc:
        return failure(cid, exc.code, exc.message)
    except ApiError as exc:
        return failure(cid, "invalid_argument" if exc.status == 400 else "unknown_error",
                       f"{exc.status}: {exc.detail}")
    except HTTPException as exc:  # an auth handler's refusal
        return failure(cid, "unknown_error", f"{exc.status_code}: {exc.detail}")


def _run_body(ctx: ServerContext, params: dict[str, Any], assistant_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {"assistant_id": assistant_id, "stream_mode": list(RUN_MODES), "stream_subgraphs": True,
                            "if_not_exists": "create"}
    if ctx.settings.protocol_start_delay > 0:
        body["after_seconds"] = ctx.settings.protocol_start_delay
    for key in ("config", "metadata", "context"):
        if params.get(key) is not None:
            body[key] = params[key]
    strategy = params.get("multitask_strategy") or params.get("multitaskStrategy")
    if strategy is not None:
        body["multitask_strategy"] = strategy
    return body


async def _pending_interrupts(ctx: ServerContext, thread: dict[str, Any]) -> dict[str, Any]:
    """``{interrupt id: value}`` of the thread's pending interrupts (from its latest state)."""
    graph = await ctx.thread_graph(thread, required=False)
    if graph is None:
        return {}
    snap = await graph.aget_state({"configurable": {"thread_id": thread["thread_id"]}})
    found: dict[str, Any] = {}
    for task in snap.tasks or ():
        for item in task.interrupts or ():
            iid = item.get("id") if isinstance(item, dict) else getattr(item, "id", None)
            if iid:
                found[iid] = item
    return found


async def _claimed(ctx: ServerContext, thread_id: str) -> set[str]:
    """Interrupt ids already answered by a run that is queued or running on the thread."""
    out: set[str] = set()
    for run in await ctx.service.active_runs(thread_id):
        out.update(run["kwargs"].get("answers") or ())
    return out


async def _run_start(ctx: ServerContext, thread_id: str, params: dict[str, Any],
                     auth: RequestAuth | None = None) -> dict[str, Any]:
    assistant_id = params.get("assistant_id")
    if not isinstance(assistant_id, str) or not assistant_id:
        raise CommandError("invalid_argument", "run.start requires an assistant_id.")
    body = _run_body(ctx, params, assistant_id)
    thread = await ctx.threads.find(thread_id)
    pending: dict[str, Any] = {}
    if thread is not None and not await ctx.service.busy(thread_id):
        pending = await _pending_interrupts(ctx, thread)
    if pending:  # run.start on an interrupted thread answers its interrupts with ``input``
        body["command"] = {"resume": {iid: params.get("input") for iid in pending}}
    else:
        body["input"] = params.get("input")
    job = await ctx.service.create(thread_id, body, protocol="v3", auth=auth, answers=sorted(pending) or None)
    return {"run_id": job.run_id}


async def _input_respond(ctx: ServerContext, thread_id: str, params: dict[str, Any],
                         auth: RequestAuth | None = None) -> dict[str, Any]:
    responses = params.get("responses")
    if responses is None:
        responses = [params]
    if not isinstance(responses, list) or not responses or not all(isinstance(r, dict) for r in responses):
        raise CommandError("invalid_argument", "input.respond needs interrupt_id and response, or responses.")
    thread = await ctx.threads.find(thread_id)
    pending = await _pending_interrupts(ctx, thread) if thread is not None else {}
    log = ctx.thread_logs.get(thread_id)
    announced = log.interrupt_ids if log is not None else set()
    claimed = await _claimed(ctx, thread_id)
    resume: dict[str, Any] = {}
    for item in responses:
        iid = item.get("interrupt_id")
        if not pending and iid not in announced:
            raise CommandError("no_such_run", "No interrupted run is bound to this thread.")
        if not isinstance(iid, str) or iid not in pending or iid in claimed:
            raise CommandError("no_such_interrupt", f"Unknown or already-consumed interrupt: {iid}")
        resume[iid] = item.get("response")
    command: dict[str, Any] = {"resume": resume}
    for key in ("update", "goto"):
        if params.get(key) is not None:
            command[key] = params[key]
    meta = thread.get("metadata") or {}
    body = _run_body(ctx, params, str(meta.get("assistant_id") or meta.get("graph_id")))
    body["command"] = command
    await ctx.service.create(thread_id, body, protocol="v3", auth=auth, answers=sorted(resume))
    return {}


async def _subscribe(ctx: ServerContext, thread_id: str, params: dict[str, Any],
                     auth: RequestAuth | None = None) -> dict[str, Any]:
    return {"subscription_id": str(uuid.uuid4()), "replayed_events": 0}


async def _unsubscribe(ctx: ServerContext, thread_id: str, params: dict[str, Any],
                       auth: RequestAuth | None = None) -> dict[str, Any]:
    return {}


async def _agent_tree(ctx: ServerContext, thread_id: str, params: dict[str, Any],
                      auth: RequestAuth | None = None) -> dict[str, Any]:
    active = await ctx.service.active_runs(thread_id)
    if not active:
        raise CommandError("no_such_run", "No active run is bound to this thread.")
    run = active[0]
    status = "running" if run.get("status") == "running" else "started"
    return {"tree": {"namespace": [], "status": status, "graph_name": run["metadata"].get("graph_id")}}


_HANDLERS = {
    "run.start": _run_start,
    "input.respond": _input_respond,
    "subscription.subscribe": _subscribe,
    "subscription.unsubscribe": _unsubscribe,
    "agent.getTree": _agent_tree,
}
