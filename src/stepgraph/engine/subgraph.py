"""Graphs inside graphs: ``Command.PARENT`` bubbling from a child to its parent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from stepgraph.constants import NS_SEP
from stepgraph.engine.timetravel import recast_ns
from stepgraph.errors import ParentCommand, ParentCommandAtRootError
from stepgraph.types import Command

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task


def raise_parent_command(task: Task, cmd: Any) -> NoReturn:
    """Hand ``cmd`` to the parent graph; at the root there is none, which is a clear error."""
    if getattr(task.run, "parent_task", None) is None and not task.run.checkpoint_ns:
        raise ParentCommandAtRootError(cmd, task.name, task.step)
    raise ParentCommand(cmd)


def child_config(graph: Any, parent: Task, config: dict[str, Any]) -> dict[str, Any]:
    """The config of a graph run from inside ``parent``'s node: thread and namespace.

    The child runs under ``parent_ns|node:task_id`` (a second call from the same task adds
    a ``|1`` segment); ``checkpointer=True`` children drop the task ids so their history
    carries across parent runs. ``checkpoint_map`` gains the parent's current checkpoint.
    """
    base = parent.config
    configurable = {**(base.get("configurable") or {}), **(config.get("configurable") or {})}
    ns = parent.ns
    calls = parent.subgraph_calls
    parent.subgraph_calls += 1
    if graph.checkpointer is True:
        ns = recast_ns(ns)
    if calls:
        ns = f"{ns}{NS_SEP}{calls}"
    configurable["checkpoint_ns"] = ns
    configurable.pop("checkpoint_id", None)
    run = parent.run
    if run.checkpointer is not None and run.checkpoint_id:
        configurable["checkpoint_map"] = {
            **(configurable.get("checkpoint_map") or {}),
            run.checkpoint_ns: run.checkpoint_id,
        }
    merged = {**base, **config, "configurable": configurable}
    # as LangGraph: the parent task's metadata and tags reach the child, key by key (the
    # child's own, bound or given, win); user metadata thus reaches nested agents' runs
    merged["metadata"] = {**(base.get("metadata") or {}), **(config.get("metadata") or {})}
    tags = [*(base.get("tags") or ()), *(config.get("tags") or ())]
    if tags:
        merged["tags"] = list(dict.fromkeys(tags))
    merged.setdefault("recursion_limit", base.get("recursion_limit"))
    if merged.get("recursion_limit") is None:
        merged.pop("recursion_limit")
    return merged


_COORDINATES = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")


def runs_on_its_own(parent: Task, config: Any) -> bool:
    """A graph called inside a node with a config naming its own checkpoint lineage (a
    ``thread_id``, a namespace...) is a root run of its own, not a child of the node.

    The node's own config passed along (same namespace) keeps it a child.
    """
    configurable = (config or {}).get("configurable") or {}
    if not any(k in configurable for k in _COORDINATES):
        return False
    return configurable.get("checkpoint_ns", "") != parent.ns


def parent_command_value(exc: ParentCommand) -> Any:
    """A child graph's ``Command(graph=PARENT)`` as this node's own return value."""
    cmd = exc.args[0]
    if cmd.graph != Command.PARENT:
        raise exc
    return Command(update=cmd.update, goto=cmd.goto, resume=cmd.resume)
