"""Planning a superstep: PUSH tasks (one per queued ``Send``) first, then PULL tasks.

A node becomes a PULL task when one of its trigger channels is available and has a
version it has not seen. Only nodes subscribed to a channel updated in the previous step
are candidates, so planning costs what changed, not the size of the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.constants import (
    ERROR,
    ERROR_SOURCE_NODE,
    INTERRUPT,
    MISSING,
    NO_WRITES,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    TASKS,
)
from stepgraph.engine.ids import path_sort_key
from stepgraph.engine.ids import task_id as make_task_id
from stepgraph.engine.tasks import Task
from stepgraph.engine.views import VALUE_SLOT
from stepgraph.errors import InvalidUpdateError
from stepgraph.types import TimeoutPolicy

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop

_PUSH_TRIGGERS = (PUSH,)


def plan_tasks(loop: RunLoop, *, for_execution: bool, by_id: bool = True) -> dict[str, Task]:
    """The tasks of the next step, keyed by id, in planning order (PUSH, then PULL).

    ``by_id=False`` (a step of a run without a checkpointer: nothing looks a task up by id)
    keys them by their path's sort key instead, and each id is only hashed if it is read
    (``Task.id``): the same id, made only when a stream, a subgraph or the node asks."""
    tasks: dict[str, Task] = {}
    nodes = loop.nodes
    channels = loop.channels
    step = loop.step
    ckpt_id = loop.checkpoint_id
    ns = loop.checkpoint_ns
    tasks_ch = channels.get(TASKS)
    if tasks_ch is not None and tasks_ch.is_available():
        for idx, packet in enumerate(tasks_ch.get()):
            node = nodes.get(packet.node)
            if node is None:
                raise InvalidUpdateError(
                    f"A Send targets unknown node '{packet.node}' (step {step}).",
                    code="SG220",
                    hint=f"send only to existing nodes: {sorted(nodes)}",
                )
            path = (PUSH, idx, False)
            sort_key = path_sort_key(path)
            parts = (ckpt_id, ns, step, packet.node, PUSH, idx)
            tid = make_task_id(*parts) if by_id else None
            tasks[tid or sort_key] = Task(
                tid, packet.node, path, packet.arg, node, _PUSH_TRIGGERS, loop, step,
                _timeout(node, packet), sort_key, parts,
            )
    updated = loop.updated
    if updated is None:
        candidates: Any = nodes
    else:
        t2n = loop.trigger_to_nodes
        if len(updated) == 1:  # (the common step: one channel moved)
            for chan in updated:
                subs = t2n.get(chan)
            candidates = () if not subs else subs if len(subs) == 1 else sorted(set(subs))
        else:
            names: set[str] = set()
            for chan in updated:
                subs = t2n.get(chan)
                if subs:
                    names.update(subs)
            candidates = sorted(names)
    versions = loop.versions
    seen_all = loop.seen
    inputs_cache: dict[Any, Any] = {}
    for name in candidates:
        node = nodes[name]
        seen = seen_all.get(name)
        fired = []
        for trig in node.triggers:
            ch = channels.get(trig)
            if ch is None or (
                ch.value is MISSING if type(ch) in VALUE_SLOT else not ch.is_available()
            ):
                continue
            version = versions.get(trig)
            if seen is None or trig not in seen or (version is not None and version > seen[trig]):
                fired.append(trig)
        if not fired:
            continue
        triggers = tuple(sorted(fired)) if len(fired) > 1 else tuple(fired)
        inp = read_input(loop, node, inputs_cache) if for_execution else None
        if inp is _SKIP:
            continue
        pull = _PULL_PATHS.get(name)
        if pull is None:
            pull = _pull_path(name)
        parts = (ckpt_id, ns, step, name, PULL, *triggers)
        tid = make_task_id(*parts) if by_id else None
        tasks[tid or pull[1]] = Task(
            tid, name, pull[0], inp, node, triggers, loop, step, node.timeout, pull[1], parts
        )
    return tasks


_PULL_PATHS: dict[str, tuple[tuple[str, str], str]] = {}
"""A node name's PULL task path and its sort key, made once per name (bounded)."""


def _pull_path(name: str) -> tuple[tuple[str, str], str]:
    path = (PULL, name)
    made = (path, path_sort_key(path))
    if len(_PULL_PATHS) < 4096:
        _PULL_PATHS[name] = made
    return made


_SKIP = object()


def read_input(loop: RunLoop, node: Any, cache: dict[Any, Any]) -> Any:
    """The node's input: one channel's value, or a dict of the available channels it reads."""
    spec = node.channels
    channels = loop.channels
    if isinstance(spec, str):
        ch = channels[spec]
        if not ch.is_available():
            return _SKIP
        value = ch.get()
    else:
        base = cache.get(spec)
        if base is None:
            base = cache[spec] = loop.views.read(channels, spec)
        value = dict(base)
        if node.managed_keys:
            managed = loop.graph.managed
            for k in node.managed_keys:
                value[k] = managed[k].get(loop)
    if node.mapper is not None:
        value = node.mapper(value)
    return value


def _timeout(node: Any, packet: Any) -> Any:
    if getattr(packet, "timeout", None) is None:
        return node.timeout
    return TimeoutPolicy.coerce(packet.timeout)


def attach_pending_writes(loop: RunLoop) -> None:
    """Give planned tasks the writes saved for them before a crash/interrupt (not re-run)."""
    if not loop.pending_writes:
        return
    tasks = loop.tasks
    for tid, chan, value in loop.pending_writes:
        if tid == NULL_TASK_ID:
            continue
        task = tasks.get(tid)
        if task is None:
            continue
        if chan == RESUME:
            task.resume = list(value) if isinstance(value, (list, tuple)) else [value]
        elif chan == ERROR_SOURCE_NODE:
            if task.node.error_handler is not None:  # the node failed: its handler runs now
                task.handler_due = _saved_error(loop, tid)
        elif chan in (ERROR, INTERRUPT):
            continue
        elif chan == NO_WRITES:
            task.cached_done = True
        else:
            task.writes.append((chan, value))
            task.cached_done = True


def _saved_error(loop: RunLoop, task_id: str) -> BaseException:
    """The node error saved for ``task_id`` (an exception, or its stored form wrapped)."""
    for tid, chan, value in loop.pending_writes:
        if tid == task_id and chan == ERROR:
            return value if isinstance(value, BaseException) else RuntimeError(str(value))
    return RuntimeError("the node failed (its error was not saved)")
