"""The run-creation body shared by ``/runs``, ``/runs/stream``, ``/runs/wait`` (with or without
a thread): the validated ``RunCreate`` model (``schemas.runs``) with the defaults applied."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stepgraph.server.schemas.fields import as_dict
from stepgraph.server.schemas.runs import RunCreate
from stepgraph.server.validation import validate

__all__ = ["RunRequest", "parse_run_request"]

STRATEGIES = ("reject", "interrupt", "rollback", "enqueue")


@dataclass
class RunRequest:
    """A validated run-creation body."""

    assistant_id: str
    input: Any
    command: dict[str, Any] | None
    stream_mode: list[str]
    stream_subgraphs: bool
    stream_resumable: bool
    interrupt_before: list[str] | str | None
    interrupt_after: list[str] | str | None
    config: dict[str, Any]
    context: dict[str, Any] | None
    metadata: dict[str, Any]
    checkpoint: dict[str, Any] | None
    checkpoint_id: str | None
    multitask_strategy: str
    if_not_exists: str
    on_disconnect: str
    on_completion: str
    durability: str
    after_seconds: float
    webhook: str | None
    feedback_keys: list[str] | None


def parse_run_request(body: dict[str, Any] | RunCreate) -> RunRequest:
    """A run-creation body (a dict is validated first, ``ApiError`` 422 when malformed)."""
    req = body if isinstance(body, RunCreate) else validate(RunCreate, body)
    durability = req.durability
    if durability is None:
        durability = "exit" if req.checkpoint_during is False else "async"
    return RunRequest(
        assistant_id=req.assistant_id,
        input=req.input,
        command=as_dict(req.command),  # with a command, ``input`` is ignored (clients send both)
        stream_mode=list(dict.fromkeys(req.stream_mode)) if req.stream_mode else ["values"],
        stream_subgraphs=bool(req.stream_subgraphs),
        stream_resumable=bool(req.stream_resumable),
        interrupt_before=req.interrupt_before,
        interrupt_after=req.interrupt_after,
        config=as_dict(req.config) or {},
        context=req.context,
        metadata=req.metadata or {},
        checkpoint=as_dict(req.checkpoint),
        checkpoint_id=req.checkpoint_id,
        multitask_strategy=req.multitask_strategy or "enqueue",
        if_not_exists=req.if_not_exists or "reject",
        on_disconnect=req.on_disconnect or "continue",
        on_completion=req.on_completion or "delete",
        durability=durability,
        after_seconds=float(req.after_seconds or 0),
        webhook=req.webhook,
        feedback_keys=req.feedback_keys,
    )
