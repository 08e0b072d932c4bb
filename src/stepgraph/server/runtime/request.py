"""The run-creation body shared by ``/runs``, ``/runs/stream``, ``/runs/wait`` (with or without
a thread), checked field by field (422 on anything malformed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stepgraph.server.errors import ApiError
from stepgraph.server.runtime.wire import WIRE_MODES
from stepgraph.server.validation import opt_bool, opt_dict, opt_enum, opt_str, opt_str_list, req_str

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


def _stream_mode(body: dict[str, Any]) -> list[str]:
    value = body.get("stream_mode")
    if value is None:
        return ["values"]
    modes = [value] if isinstance(value, str) else value
    if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
        raise ApiError(422, "Invalid 'stream_mode': expected a string or a list of strings.")
    bad = [m for m in modes if m not in WIRE_MODES]
    if bad:
        raise ApiError(422, f"Invalid 'stream_mode' {bad[0]!r}: expected one of {', '.join(WIRE_MODES)}.")
    return list(dict.fromkeys(modes))


def _command(body: dict[str, Any]) -> dict[str, Any] | None:
    command = opt_dict(body, "command")
    if command is None:
        return None
    unknown = set(command) - {"resume", "update", "goto"}
    if unknown:
        raise ApiError(422, f"Invalid 'command': unknown key(s) {sorted(unknown)}.")
    goto = command.get("goto")
    items = goto if isinstance(goto, list) else [] if goto is None else [goto]
    for item in items:
        if not (isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("node"), str))):
            raise ApiError(422, "Invalid 'command.goto': expected node names or {node, input} objects.")
    update = command.get("update")
    if update is not None and not isinstance(update, (dict, list)):
        raise ApiError(422, "Invalid 'command.update': expected an object or a list of [key, value] pairs.")
    return command


def _config(body: dict[str, Any]) -> dict[str, Any]:
    config = opt_dict(body, "config") or {}
    for key in ("configurable", "metadata"):
        if config.get(key) is not None and not isinstance(config[key], dict):
            raise ApiError(422, f"Invalid 'config.{key}': expected an object.")
    tags = config.get("tags")
    if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
        raise ApiError(422, "Invalid 'config.tags': expected a list of strings.")
    limit = config.get("recursion_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ApiError(422, "Invalid 'config.recursion_limit': expected a positive integer.")
    return config


def parse_run_request(body: dict[str, Any]) -> RunRequest:
    """Validate a run-creation body."""
    command = _command(body)  # with a command, ``input`` is ignored (clients send both)
    after = body.get("after_seconds")
    if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float)) or after < 0):
        raise ApiError(422, "Invalid 'after_seconds': expected a number >= 0.")
    checkpoint_during = body.get("checkpoint_during")
    durability = opt_enum(body, "durability", ("sync", "async", "exit"), None)
    if durability is None:
        durability = "exit" if checkpoint_during is False else "async"
    feedback = opt_str_list(body, "feedback_keys")
    return RunRequest(
        assistant_id=req_str(body, "assistant_id"),
        input=body.get("input"),
        command=command,
        stream_mode=_stream_mode(body),
        stream_subgraphs=opt_bool(body, "stream_subgraphs"),
        stream_resumable=opt_bool(body, "stream_resumable"),
        interrupt_before=opt_str_list(body, "interrupt_before", star=True),
        interrupt_after=opt_str_list(body, "interrupt_after", star=True),
        config=_config(body),
        context=opt_dict(body, "context"),
        metadata=opt_dict(body, "metadata") or {},
        checkpoint=opt_dict(body, "checkpoint"),
        checkpoint_id=opt_str(body, "checkpoint_id"),
        multitask_strategy=opt_enum(body, "multitask_strategy", STRATEGIES, "enqueue") or "enqueue",
        if_not_exists=opt_enum(body, "if_not_exists", ("reject", "create"), "reject") or "reject",
        on_disconnect=opt_enum(body, "on_disconnect", ("cancel", "continue"), "continue") or "continue",
        on_completion=opt_enum(body, "on_completion", ("delete", "keep"), "delete") or "delete",
        durability=durability,
        after_seconds=float(after or 0),
        webhook=opt_str(body, "webhook"),
        feedback_keys=feedback if isinstance(feedback, list) else None,
    )
