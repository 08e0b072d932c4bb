"""Authorizing a new run, as LangGraph's server does before storing one.

1. The ``threads.create_run`` handler sees a ``RunsCreate`` value (``thread_id`` — ``None``
   for a stateless run —, ``assistant_id``, ``run_id``, ``metadata``, ``kwargs`` with the
   input, command, config and context, ...). What it changes is applied: the request is
   validated again from the changed value, so a stamped ``metadata["owner"]`` reaches the
   run and a thread the run creates.
2. A non-system assistant must pass the ``assistants.read`` handler's filter.
3. An existing thread must pass the ``create_run`` filter.
Either refusal answers 404 ``Thread or assistant not found.``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.request import RunRequest, parse_run_request
from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.schemas.runs import RunCreate

if TYPE_CHECKING:
    from stepgraph.server.auth.authorizer import RequestAuth
    from stepgraph.server.context import ServerContext

__all__ = ["authorize_run"]

_KWARGS = ("input", "command", "config", "context")
_TOP = ("metadata", "multitask_strategy", "if_not_exists", "after_seconds")
NOT_FOUND = "Thread or assistant not found."


def _value(req: RunRequest, thread_id: str | None, assistant: dict[str, Any], run_id: str,
           temporary: bool) -> dict[str, Any]:
    return {
        "thread_id": None if temporary else thread_id, "assistant_id": assistant["assistant_id"],
        "run_id": run_id, "status": "pending", "metadata": req.metadata,
        "prevent_insert_if_inflight": req.multitask_strategy == "reject",
        "multitask_strategy": req.multitask_strategy, "if_not_exists": req.if_not_exists,
        "after_seconds": req.after_seconds,
        "kwargs": {"input": req.input, "command": req.command, "config": req.config, "context": req.context,
                   "stream_mode": req.stream_mode, "interrupt_before": req.interrupt_before,
                   "interrupt_after": req.interrupt_after, "webhook": req.webhook,
                   "feedback_keys": req.feedback_keys, "temporary": temporary,
                   "subgraphs": req.stream_subgraphs, "resumable": req.stream_resumable,
                   "durability": req.durability, "on_disconnect": req.on_disconnect},
    }


async def authorize_run(ctx: ServerContext, auth: RequestAuth, req: RunRequest, body: dict[str, Any] | RunCreate,
                        thread_id: str | None, assistant: dict[str, Any], run_id: str) -> RunRequest:
    """The (possibly changed) request once the handlers allowed it; 404/403 otherwise.

    What the handler changed is validated again as a ``RunCreate`` (422 when it no longer is one).
    """
    temporary = thread_id is None and req.on_completion == "delete"
    value = _value(req, thread_id, assistant, run_id, temporary)
    access = await auth.check("threads", "create_run", value)
    kwargs = value.get("kwargs") if isinstance(value.get("kwargs"), dict) else {}
    sent = as_dict(body) if isinstance(body, RunCreate) else dict(body)
    changed = {**(sent or {}), **{k: value.get(k) for k in _TOP}, **{k: kwargs.get(k) for k in _KWARGS}}
    if changed.get("command") is None:
        changed.pop("command", None)
    req = parse_run_request(changed)
    if (assistant.get("metadata") or {}).get("created_by") != "system":
        allowed = await auth.check("assistants", "read", {"assistant_id": assistant["assistant_id"]})
        if not await ctx.assistants.visible(assistant, allowed):
            raise ApiError(404, NOT_FOUND)
    if thread_id is not None and access is not None and await ctx.threads.find(thread_id, access) is None \
            and await ctx.threads.exists(thread_id):
        raise ApiError(404, NOT_FOUND)
    return req
