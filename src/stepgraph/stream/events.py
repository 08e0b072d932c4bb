"""The payloads of the ``updates``, ``tasks``, ``debug`` and ``checkpoints`` stream modes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stepgraph.constants import ERROR, INTERRUPT, RETURN

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task


def _now() -> str:
    return datetime.now(UTC).isoformat()


def update_payload(loop: RunLoop, task: Task) -> Any:
    """What a task changed in the state: a dict, a list of dicts, or ``None``."""
    keys = loop.stream_keys
    if isinstance(keys, str):
        vals = [v for c, v in task.writes if c == keys]
        if not vals:
            if task.writes and task.writes[0][0] == RETURN:
                return task.writes[0][1]
            return None
        return vals[0] if len(vals) == 1 else vals
    keyset = loop.graph.stream_keyset
    dicts: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for chan, value in task.writes:
        if chan not in keyset:
            continue
        if current is None or chan in current:
            current = {}
            dicts.append(current)
        current[chan] = value
    if not dicts:
        return None
    return dicts[0] if len(dicts) == 1 else dicts


FRAMEWORK_METADATA_KEYS = frozenset(
    {
        "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
        "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
    }
)
"""Metadata every task config carries; task payloads leave them out (the task says it)."""


def user_tags(tags: Any) -> list[str] | None:
    """``tags`` without langchain's ``seq:step:N`` bookkeeping (``None`` if none are left)."""
    if not tags:
        return None
    kept = [t for t in tags if not t.startswith("seq:step")]
    return kept or None


def task_metadata(config: Any) -> dict[str, Any] | None:
    """The user-meaningful metadata of a task's config (plus its user tags under ``tags``),
    a fresh dict; ``None`` when nothing is left."""
    if config is None:
        return None
    md = {
        k: v for k, v in (config.get("metadata") or {}).items()
        if k not in FRAMEWORK_METADATA_KEYS
    }
    tags = user_tags(config.get("tags"))
    if tags is not None:
        md["tags"] = tags
    return md or None


def task_payload(task: Any) -> dict[str, Any]:
    """The ``tasks`` stream payload announcing ``task`` (anything with ``id``, ``name``,
    ``input``, ``triggers`` and ``config``)."""
    payload = {"id": task.id, "name": task.name, "input": task.input, "triggers": tuple(task.triggers)}
    md = task_metadata(task.config)
    if md is not None:
        payload["metadata"] = md
    return payload


def task_start(loop: RunLoop, task: Task) -> None:
    modes = loop.sink.modes
    if "tasks" not in modes and "debug" not in modes:
        return
    payload = task_payload(task)
    loop.emit("tasks", payload)
    loop.emit("debug", {"step": task.step, "timestamp": _now(), "type": "task", "payload": payload})


def restored_results(loop: RunLoop, tasks: Any) -> None:
    """Tasks a resumed run does not rerun (their writes were saved): their updates again,
    marked ``cached``."""
    if "updates" not in loop.sink.modes:
        return
    for task in tasks:
        if task.cached_done and task.writes and not task.node.hidden:
            loop.emit("updates", {task.label or task.name: update_payload(loop, task),
                                  "__metadata__": {"cached": True}})


def task_result(loop: RunLoop, task: Task) -> None:
    modes = loop.sink.modes
    if task.cached:
        if "updates" in modes:
            loop.emit("updates", {task.name: update_payload(loop, task), "__metadata__": {"cached": True}})
        return
    if "updates" in modes and task.error is None and not task.paused:
        loop.emit("updates", {task.label or task.name: update_payload(loop, task)})
    elif task.paused and task.interrupts:
        # A subgraph paused at a breakpoint has no interrupts: the root says so at the end.
        if "updates" in modes:
            loop.emit("updates", {INTERRUPT: tuple(task.interrupts)})
        if "values" in modes and not isinstance(loop.stream_keys, str):
            loop.emit("values", {**loop.read(loop.stream_keys), INTERRUPT: tuple(task.interrupts)})
    if "tasks" not in modes and "debug" not in modes:
        return
    result: dict[str, Any] = {}
    for chan, value in task.writes:
        if chan == ERROR or chan not in loop.graph.stream_keyset:
            continue
        if chan in result:
            prev = result[chan]
            if isinstance(prev, dict) and "$writes" in prev:
                prev["$writes"].append(value)
            else:
                result[chan] = {"$writes": [prev, value]}
        else:
            result[chan] = value
    payload = {
        "id": task.id,
        "name": task.name,
        "error": task.error,
        "result": result,
        "interrupts": [{"value": i.value, "id": i.id} for i in task.interrupts],
    }
    loop.emit("tasks", payload)
    loop.emit(
        "debug", {"step": task.step, "timestamp": _now(), "type": "task_result", "payload": payload}
    )


def call_result(loop: RunLoop, task: Task, value: Any = None, error: BaseException | None = None,
                interrupts: Any = ()) -> None:
    """The ``tasks``/``debug`` result of a functional-API task call (its value under
    ``__return__``)."""
    modes = loop.sink.modes
    if "tasks" not in modes and "debug" not in modes:
        return
    payload = {
        "id": task.id,
        "name": task.name,
        "error": repr(error) if error is not None else None,
        "result": {RETURN: value} if error is None and not interrupts else {},
        "interrupts": [{"value": i.value, "id": i.id} for i in interrupts],
    }
    loop.emit("tasks", payload)
    loop.emit(
        "debug", {"step": task.step, "timestamp": _now(), "type": "task_result", "payload": payload}
    )
