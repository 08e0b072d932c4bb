"""The payloads of the ``updates``, ``tasks``, ``debug`` and ``checkpoints`` stream modes.

Each function returns ``(mode, payload)`` parts and emits nothing: the loop returns them
as ``Emit`` effects for its driver (task calls, which run inside a task, stream theirs at
once). Nothing here imports the engine: what a part needs from the run (a checkpoint's
description, the state after a paused step) is computed by the loop and passed in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph._clock import utc_now_iso
from stepgraph.constants import ERROR, INTERRUPT, MISSING, RETURN

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task


_now = utc_now_iso


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


Parts = list[tuple[str, Any]]
"""``(mode, payload)`` pairs for the loop's namespace (the loop hands them to its driver)."""

_NO_PARTS: Parts = []


def task_start(loop: RunLoop, task: Task) -> Parts:
    """The ``tasks``/``debug`` parts announcing ``task``."""
    modes = loop.sink.modes
    if "tasks" not in modes and "debug" not in modes:
        return _NO_PARTS
    payload = task_payload(task)
    return [
        ("tasks", payload),
        ("debug", {"step": task.step, "timestamp": _now(), "type": "task", "payload": payload}),
    ]


def restored_results(loop: RunLoop, tasks: Any) -> Parts:
    """Tasks a resumed run does not rerun (their writes were saved): their updates again,
    marked ``cached``."""
    if "updates" not in loop.sink.modes:
        return _NO_PARTS
    return [
        ("updates", {task.label or task.name: update_payload(loop, task),
                     "__metadata__": {"cached": True}})
        for task in tasks
        if task.cached_done and task.writes and not task.node.hidden
    ]


def task_result(loop: RunLoop, task: Task) -> Parts:
    """The parts of a finished task: its update, its interrupt, its ``tasks`` result."""
    modes = loop.sink.modes
    if task.cached:
        if "updates" in modes:
            return [("updates", {task.name: update_payload(loop, task), "__metadata__": {"cached": True}})]
        return _NO_PARTS
    out: Parts = []
    if "updates" in modes and task.error is None and not task.paused:
        out.append(("updates", {task.label or task.name: update_payload(loop, task)}))
    elif task.paused and task.interrupts:
        # A subgraph paused at a breakpoint has no interrupts: the root says so at the end.
        if "updates" in modes:
            out.append(("updates", {INTERRUPT: tuple(task.interrupts)}))
        if "values" in modes and not isinstance(loop.stream_keys, str):
            out.append(("values", {**loop.read(loop.stream_keys), INTERRUPT: tuple(task.interrupts)}))
    if "tasks" not in modes and "debug" not in modes:
        return out
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
    out.append(("tasks", payload))
    out.append(
        ("debug", {"step": task.step, "timestamp": _now(), "type": "task_result", "payload": payload})
    )
    return out


def call_result(loop: RunLoop, task: Task, value: Any = None, error: BaseException | None = None,
                interrupts: Any = ()) -> Parts:
    """The ``tasks``/``debug`` result of a functional-API task call (its value under
    ``__return__``)."""
    modes = loop.sink.modes
    if "tasks" not in modes and "debug" not in modes:
        return _NO_PARTS
    payload = {
        "id": task.id,
        "name": task.name,
        "error": repr(error) if error is not None else None,
        "result": {RETURN: value} if error is None and not interrupts else {},
        "interrupts": [{"value": i.value, "id": i.id} for i in interrupts],
    }
    return [
        ("tasks", payload),
        ("debug", {"step": task.step, "timestamp": _now(), "type": "task_result", "payload": payload}),
    ]


def interrupt_parts(modes: frozenset[str], values: Any, tasks: list[Task]) -> Parts:
    """A root run stopping on an interrupt: ``values`` (``values`` is the state with the
    finished tasks' writes applied on a copy, ``MISSING`` when they did not write to the
    output) and, when no task left an interrupt (subgraphs paused at breakpoints), an empty
    ``__interrupt__`` update. Each interrupt was streamed when its task stopped
    (``task_result``)."""
    out: Parts = []
    if "values" in modes and values is not MISSING:
        out.append(("values", values))
    if "updates" in modes and not any(t.interrupts for t in tasks):
        out.append(("updates", {INTERRUPT: ()}))
    return out


def checkpoint_parts(payload: dict[str, Any], ts: str) -> Parts:
    """The ``checkpoints``/``debug`` parts of a checkpoint (``payload``: what
    ``engine.snapshot.checkpoint_payload`` describes it as)."""
    return [
        ("checkpoints", payload),
        ("debug", {"step": payload["metadata"].get("step"), "timestamp": ts, "type": "checkpoint",
                   "payload": payload}),
    ]
