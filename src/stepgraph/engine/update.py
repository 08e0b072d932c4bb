"""``update_state``: apply an update as if a node had returned it (pure; the caller saves).

The update runs ``as_node``'s *writers* (not its function), so reducers apply and the
node's edges and routers fire. The result is a new checkpoint with ``source="update"``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from stepgraph.constants import END, ERROR, INPUT, INTERRUPT, NULL_TASK_ID, PUSH, START
from stepgraph.engine import planner
from stepgraph.engine.apply import WriteSource
from stepgraph.engine.ids import checkpoint_id
from stepgraph.engine.ids import task_id as make_task_id
from stepgraph.engine.snapshot import loop_for
from stepgraph.engine.tasks import Task
from stepgraph.errors import InvalidUpdateError

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.pregel.main import Pregel

Result = tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]
"""(parent config, checkpoint, metadata, new_versions) to ``put``."""

TaskWrites = list[tuple[str, list[tuple[str, Any]]]]
"""``(task_id, writes)`` of the updates, to store on the updated checkpoint first: the
checkpoint's planned task for ``as_node`` then shows the update as its ``result``."""


def _apply_pending(loop: RunLoop) -> None:
    """Keep the effects of finished tasks and null writes saved on the checkpoint."""
    if not loop.pending_writes:
        return
    null = [(c, v) for t, c, v in loop.pending_writes if t == NULL_TASK_ID]
    if null:
        loop.apply([WriteSource(INPUT, null)], volatile=False)
    tasks = planner.plan_tasks(loop, for_execution=False)
    for tid, chan, value in loop.pending_writes:
        if chan in (ERROR, INTERRUPT) or tid not in tasks:
            continue
        tasks[tid].writes.append((chan, value))
    done = [t for t in tasks.values() if t.writes]
    if done:
        loop.apply(done, mark=True)


def _infer_as_node(loop: RunLoop) -> str:
    """The node an update without ``as_node`` acts as: the only node, else the last node
    that ran (the start node before any ran)."""
    graph = loop.graph
    nodes = graph.nodes
    if len(nodes) == 1:
        return next(iter(nodes))
    best: list[str] = []
    best_version: Any = None
    for name, seen in loop.seen.items():
        if name not in nodes or not seen:
            continue
        top = max(seen.values())
        if best_version is None or top > best_version:
            best, best_version = [name], top
        elif top == best_version:
            best.append(name)
    if not best and START in nodes:
        return START
    if len(best) != 1:
        raise InvalidUpdateError("Ambiguous update, specify as_node", code="SG250",
                                 hint=f"candidates: {best or sorted(nodes)}")
    return best[0]


def _planned_ids(loop: RunLoop, saved: Any) -> dict[str, list[str]]:
    """The ids of the tasks ``saved`` plans, by node, in plan order."""
    out: dict[str, list[str]] = {}
    if saved is None:
        return out
    for tid, task in planner.plan_tasks(loop, for_execution=False).items():
        out.setdefault(task.name, []).append(tid)
    return out


def compute_update(
    graph: Pregel, config: Any, saver: Any, saved: Any, updates: list[Any], delta: Any = None
) -> tuple[Result, TaskWrites]:
    """The checkpoint after one superstep of ``updates`` (``StateUpdate``-like tuples),
    and the updates' writes as the tasks of ``saved`` they stand for; ``delta`` completes
    ``saved``'s delta keys."""
    steps = update_steps(graph, config, saver, saved, updates, delta)
    try:
        writer, task, values = next(steps)
        while True:
            writer.run(task, values)
            writer, task, values = steps.send(None)
    except StopIteration as done:
        return done.value


async def acompute_update(
    graph: Pregel, config: Any, saver: Any, saved: Any, updates: list[Any], delta: Any = None
) -> tuple[Result, TaskWrites]:
    """Async twin of ``compute_update``: async writers (an async router) are awaited."""
    steps = update_steps(graph, config, saver, saved, updates, delta)
    try:
        writer, task, values = next(steps)
        while True:
            if writer.is_async:
                await writer.arun(task, values)
            else:
                writer.run(task, values)
            writer, task, values = steps.send(None)
    except StopIteration as done:
        return done.value


def update_steps(
    graph: Pregel, config: Any, saver: Any, saved: Any, updates: list[Any], delta: Any = None
) -> Generator[tuple[Any, Task, Any], None, tuple[Result, TaskWrites]]:
    """``compute_update`` as a generator that yields each ``(writer, task, values)`` for the
    caller to run (sync or async) and returns the result."""
    loop = loop_for(graph, config, saver, saved, delta)
    fresh = saved is None
    configurable = config.get("configurable", {})
    planned = _planned_ids(loop, saved)
    task_writes: TaskWrites = []
    if not fresh and "checkpoint_id" not in configurable:
        _apply_pending(loop)
    if len(updates) > 1 and any(u[1] is None for u in updates):
        raise InvalidUpdateError("as_node is required when applying multiple updates", code="SG251")
    sources = []
    source = "update"
    for i, upd in enumerate(updates):
        values, as_node = upd[0], upd[1]
        if as_node is None:
            as_node = _infer_as_node(loop)
        if as_node == END and values is None:
            if len(updates) > 1:
                raise InvalidUpdateError("Cannot apply multiple updates when clearing state", code="SG252")
            pending = planner.plan_tasks(loop, for_execution=False)
            sources.extend(WriteSource(t.name, [], t.triggers, t.path, t.sort_key) for t in pending.values())
            continue
        if as_node == INPUT:
            # lazy: keeps `import stepgraph.graph` lean
            from stepgraph.engine.input import map_input

            writes = map_input(graph, values) if values is not None else []
            if not writes:
                raise InvalidUpdateError(f"Received no input for {graph.input_channels}", code="SG253")
            sources.append(WriteSource(INPUT, writes))
            source = "input"
            continue
        node = graph.nodes.get(as_node)
        if node is None:
            raise InvalidUpdateError(f"Node {as_node} does not exist", code="SG254",
                                     hint=f"known nodes: {sorted(graph.nodes)}")
        if not node.writers:
            raise InvalidUpdateError(f"Node {as_node} has no writers", code="SG255")
        ids = planned.get(as_node)
        tid = upd[2] if len(upd) > 2 and upd[2] else ids.pop(0) if ids else make_task_id(
            loop.checkpoint_id, loop.checkpoint_ns, loop.step, as_node, "update", i)
        task = Task(tid, as_node, ("__pregel_update", as_node, i), values, node, (INTERRUPT,), loop, loop.step)
        for writer in node.writers:
            yield writer, task, values
        sources.append(task)
        if not fresh:
            task_writes.append((tid, [(c, v) for c, v in task.writes if c != PUSH]))
    loop.apply(sources, mark=True)
    if fresh:  # a thread's first checkpoint: its input is step -1, an update step 0
        step = -1 if source == "input" else 0
    else:
        step = loop.step
    ops = loop.update_checkpoint(source, step)
    put = next(op for op in ops if op[0] == "put")
    metadata = put[3]
    if saved is not None:  # an update stays in the parent checkpoints of what it updates
        metadata = {**metadata, "parents": dict((saved.metadata or {}).get("parents") or {})}
    parent_config = _parent(config, saved)
    return (parent_config, put[2], metadata, put[4]), task_writes


def _parent(config: Any, saved: Any) -> dict[str, Any]:
    if saved is not None:
        return {"configurable": dict(saved.config["configurable"])}
    configurable = config.get("configurable", {})
    return {"configurable": {"thread_id": configurable.get("thread_id"),
                             "checkpoint_ns": configurable.get("checkpoint_ns", "")}}


def compute_fork(saved: Any) -> Result:
    """``as_node="__copy__"``: the same checkpoint again, as a sibling with a new id."""
    if saved is None:
        raise InvalidUpdateError("Cannot copy a non-existent checkpoint", code="SG256")
    ckpt = dict(saved.checkpoint)
    ckpt["id"] = checkpoint_id(max(int(saved.metadata.get("step", 0)), 0))
    metadata = {**saved.metadata, "source": "fork"}
    parent = saved.parent_config or {"configurable": {
        k: v for k, v in saved.config["configurable"].items() if k != "checkpoint_id"}}
    return parent, ckpt, metadata, dict(ckpt.get("channel_versions", {}))
