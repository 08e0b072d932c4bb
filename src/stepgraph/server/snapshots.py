"""``StateSnapshot`` -> the API's ThreadState JSON (and the bits threads keep of it)."""

from __future__ import annotations

from typing import Any

from stepgraph.server.serde import jsonable

__all__ = ["EMPTY_STATE", "interrupts_by_task", "thread_state", "wire_interrupt"]

EMPTY_STATE: dict[str, Any] = {
    "values": {}, "next": [], "tasks": [], "metadata": None, "created_at": None, "checkpoint": None,
    "parent_checkpoint": None, "interrupts": [], "checkpoint_id": None, "parent_checkpoint_id": None,
}


def wire_interrupt(interrupt: Any) -> dict[str, Any]:
    """An interrupt in the state shape ``{"id", "value"}``."""
    if isinstance(interrupt, dict):
        return {"id": interrupt.get("id"), "value": interrupt.get("value")}
    return {"id": getattr(interrupt, "id", None), "value": getattr(interrupt, "value", None)}


def _checkpoint(config: Any) -> dict[str, Any] | None:
    if not config:
        return None
    conf = config.get("configurable") or {}
    out = {"checkpoint_id": conf.get("checkpoint_id"), "thread_id": conf.get("thread_id"),
           "checkpoint_ns": conf.get("checkpoint_ns", "")}
    if conf.get("checkpoint_map"):
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def _task(task: Any) -> dict[str, Any]:
    state = task.state
    nested = thread_state(state) if hasattr(state, "values") and hasattr(state, "next") else None
    checkpoint = None
    if isinstance(state, dict) and isinstance(state.get("configurable"), dict):
        checkpoint = dict(state["configurable"])
    error = task.error
    return {
        "id": task.id,
        "name": task.name,
        "path": list(getattr(task, "path", ()) or ()),
        "error": None if error is None else (error if isinstance(error, str) else f"{type(error).__name__}({error})"),
        "interrupts": [wire_interrupt(i) for i in task.interrupts or ()],
        "checkpoint": checkpoint,
        "state": nested,
        "result": getattr(task, "result", None),
    }


def thread_state(snap: Any) -> dict[str, Any]:
    """The ThreadState JSON of ``snap`` (``EMPTY_STATE`` for a thread without checkpoints)."""
    if snap is None or (snap.metadata is None and not snap.created_at):
        return dict(EMPTY_STATE)
    checkpoint = _checkpoint(snap.config)
    parent = _checkpoint(snap.parent_config)
    return {
        "values": jsonable(snap.values) if snap.values is not None else {},
        "next": list(snap.next),
        "tasks": [_task(t) for t in snap.tasks],
        "metadata": jsonable(snap.metadata),
        "created_at": snap.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": [wire_interrupt(i) for i in getattr(snap, "interrupts", ()) or ()],
        "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
    }


def interrupts_by_task(snap: Any) -> dict[str, list[dict[str, Any]]]:
    """``{task_id: [{"id", "value"}]}`` of the pending interrupts (a thread's ``interrupts``)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if snap is None:
        return out
    for task in snap.tasks:
        if task.interrupts:
            out[task.id] = jsonable([wire_interrupt(i) for i in task.interrupts])
    return out
