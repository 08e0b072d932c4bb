"""Reading a saved checkpoint as a ``StateSnapshot`` (pure: no saver I/O here).

``get_state``, ``get_state_history`` and the ``checkpoints`` stream mode all describe a
checkpoint the same way: its values, the tasks planned from it (with the writes, errors
and interrupts saved for them) and the names of the tasks still to run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.constants import (
    ERROR,
    ERROR_SOURCE_NODE,
    INTERRUPT,
    NO_WRITES,
    NULL_TASK_ID,
    RESUME,
    RETURN,
)
from stepgraph.engine import planner
from stepgraph.engine.apply import WriteSource
from stepgraph.engine.fresh import read_with_writes
from stepgraph.engine.timetravel import with_checkpoint_map
from stepgraph.stream.sink import StreamSink
from stepgraph.types import PregelTask, StateSnapshot

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.pregel.main import Pregel
    from stepgraph.types import StateSnapshot


def loop_for(graph: Pregel, config: Any, saver: Any, saved: Any, delta: Any = None) -> RunLoop:
    """A loop restored at ``saved`` (for planning only: it never runs a task); ``delta``
    completes its delta keys (``engine.delta.load_history``)."""
    # lazy: keeps `import stepgraph.graph` lean
    from stepgraph.engine.loop import RunLoop

    loop = RunLoop(
        graph, None, {**config, "recursion_limit": 1 << 30}, sink=StreamSink(frozenset()),
        output_keys=graph.output_channels, stream_keys=graph.stream_keys, checkpointer=saver,
    )
    loop.restore(saved, delta)
    return loop


def _config_of(saved: Any) -> dict[str, Any]:
    """The snapshot's config: a subgraph's carries the ``checkpoint_map`` that replays it."""
    configurable = dict(saved.config.get("configurable", {}))
    return with_checkpoint_map({"configurable": configurable}, saved.metadata)


def _parent_config_of(saved: Any) -> dict[str, Any] | None:
    parent = saved.parent_config
    return with_checkpoint_map(parent, saved.metadata) if parent else parent


def snapshot(graph: Pregel, config: Any, saver: Any, saved: Any, *, apply_pending: bool,
             delta: Any = None) -> StateSnapshot:
    """The ``StateSnapshot`` of ``saved`` (``apply_pending``: include finished tasks' writes)."""
    if saved is None:
        return StateSnapshot({}, (), config, None, None, None, (), ())
    loop = loop_for(graph, config, saver, saved, delta)
    null_writes = [(c, v) for t, c, v in loop.pending_writes if t == NULL_TASK_ID]
    if null_writes:
        loop.apply([WriteSource("__input__", null_writes)], volatile=False)
    tasks = planner.plan_tasks(loop, for_execution=True)
    by_id = {tid: {"writes": [], "error": None, "interrupts": (), "done": False} for tid in tasks}
    for tid, chan, value in loop.pending_writes:
        info = by_id.get(tid)
        if info is None:
            continue
        if chan == ERROR:  # shown as saved by LangGraph's savers: the exception's repr
            info["error"] = repr(value) if isinstance(value, BaseException) else value
        elif chan == INTERRUPT:
            info["interrupts"] = tuple(value)
        elif chan == NO_WRITES:
            info["done"] = True
        elif chan != RESUME and chan != ERROR_SOURCE_NODE:
            info["writes"].append((chan, value))
            info["done"] = True
    done = []
    out_tasks = []
    keys = graph.stream_keys if isinstance(graph.stream_keys, str) else graph.stream_keyset
    for tid, task in tasks.items():
        info = by_id[tid]
        task.writes = [(c, v) for c, v in info["writes"] if c in graph.channels or c == RETURN]
        result = None
        if info["done"] and info["error"] is None:
            if apply_pending:  # resumed and finished: what the thread waits on is not this
                info["interrupts"] = ()
            done.append(task)
            result = _result(info["writes"], keys)
        state = _task_state(loop, task)
        out_tasks.append(PregelTask(tid, task.name, task.path, info["error"], info["interrupts"], state, result))
    if apply_pending and done and len(done) == len(tasks):
        # The whole step finished but its checkpoint was not saved (a crash between the
        # last task's writes and the checkpoint): report the step that comes next, so
        # ``next`` is never empty while work remains.
        return _advanced(graph, loop, done, saved)
    values = (
        read_with_writes(loop, done, graph.stream_keys) if apply_pending
        else loop.read(graph.stream_keys)
    )
    next_names = tuple(
        t.name for t in tasks.values() if not (apply_pending and t in done)
    )
    interrupts = tuple(i for t in out_tasks for i in t.interrupts)
    return StateSnapshot(
        values=values,
        next=next_names,
        config=_config_of(saved),
        metadata=saved.metadata,
        created_at=saved.checkpoint.get("ts"),
        parent_config=_parent_config_of(saved),
        tasks=tuple(out_tasks),
        interrupts=interrupts,
    )


def _advanced(graph: Pregel, loop: RunLoop, done: list[Any], saved: Any) -> StateSnapshot:
    loop.apply(done, mark=True)
    following = loop.plan_next()
    return StateSnapshot(
        values=loop.read(graph.stream_keys),
        next=tuple(t.name for t in following.values()),
        config=_config_of(saved),
        metadata=saved.metadata,
        created_at=saved.checkpoint.get("ts"),
        parent_config=_parent_config_of(saved),
        tasks=tuple(PregelTask(t.id, t.name, t.path) for t in following.values()),
        interrupts=(),
    )


def _result(writes: list[tuple[str, Any]], keys: str | Any) -> Any:
    """A finished task's ``result``: its return value (functional API), the value it wrote
    to a graph's only output channel, or its writes to the output channels (several writes
    to one channel as ``{"$writes": [...]}``)."""
    single = isinstance(keys, str)
    out: dict[str, Any] = {}
    for chan, value in writes:
        if chan == RETURN:
            return value
        if chan == keys if single else chan in keys:
            if chan in out:
                prev = out[chan]
                many = prev["$writes"] if isinstance(prev, dict) and "$writes" in prev else [prev]
                out[chan] = {"$writes": [*many, value]}
            else:
                out[chan] = value
    return out.get(keys) if single else out


def checkpoint_payload(loop: RunLoop, ckpt: dict[str, Any], metadata: dict[str, Any], parent_id: str | None) -> dict[str, Any]:
    """The ``checkpoints`` stream mode payload for a checkpoint the loop just made."""
    thread_id = loop.configurable.get("thread_id")
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": loop.checkpoint_ns,
                               "checkpoint_id": ckpt["id"]}}
    parent = (
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": loop.checkpoint_ns,
                          "checkpoint_id": parent_id}}
        if parent_id else None
    )
    tasks = loop.plan_next()
    return {
        "config": with_checkpoint_map(config, metadata),
        "parent_config": with_checkpoint_map(parent, metadata) if parent else None,
        "values": loop.read(loop.stream_keys),
        "metadata": metadata,
        "next": [t.name for t in tasks.values()],
        "tasks": [{"id": t.id, "name": t.name, "interrupts": (), "state": _task_state(loop, t)}
                  for t in tasks.values()],
    }


def _task_state(loop: RunLoop, task: Any) -> dict[str, Any] | None:
    """A subgraph node's task points at the namespace its checkpoints are stored under."""
    if not task.node.subgraphs:
        return None
    return {"configurable": {"thread_id": loop.configurable.get("thread_id"), "checkpoint_ns": task.ns}}
