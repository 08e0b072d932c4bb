"""Graphs inside graphs: ``Command.PARENT`` bubbling from a child to its parent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from stepgraph.errors import InvalidUpdateError, ParentCommand

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task


def raise_parent_command(task: Task, cmd: Any) -> NoReturn:
    """Hand ``cmd`` to the parent graph; at the root there is none, which is a clear error."""
    if task.run.parent_runtime is None and not task.run.checkpoint_ns:
        raise InvalidUpdateError(
            f"Node '{task.name}' returned Command(graph=Command.PARENT) but there is no parent "
            f"graph (step {task.step}).",
            code="SG241",
            hint="only nodes of a graph used as a subgraph can route their parent",
        )
    raise ParentCommand(cmd)


def child_config(graph: Any, parent: Task, config: dict[str, Any]) -> dict[str, Any]:
    """The config of a graph run from inside ``parent``'s node: thread and namespace.

    The child runs under ``parent_ns|node:task_id`` (a second call from the same task adds
    a ``|1`` segment); ``checkpointer=True`` children drop the task id so their history
    carries across parent runs.
    """
    from stepgraph.constants import NS_END, NS_SEP

    base = parent.config
    configurable = {**(base.get("configurable") or {}), **(config.get("configurable") or {})}
    ns = parent.ns
    calls = parent.subgraph_calls
    parent.subgraph_calls += 1
    if graph.checkpointer is True:
        head, _, last = ns.rpartition(NS_SEP)
        last = last.split(NS_END, 1)[0]
        ns = f"{head}{NS_SEP}{last}" if head else last
    elif calls:
        ns = f"{ns}{NS_SEP}{calls}"
    configurable["checkpoint_ns"] = ns
    configurable.pop("checkpoint_id", None)
    merged = {**base, **config, "configurable": configurable}
    merged.setdefault("recursion_limit", base.get("recursion_limit"))
    if merged.get("recursion_limit") is None:
        merged.pop("recursion_limit")
    return merged


def parent_command_value(exc: ParentCommand) -> Any:
    """A child graph's ``Command(graph=PARENT)`` as this node's own return value."""
    from stepgraph.types import Command

    cmd = exc.args[0]
    if cmd.graph != Command.PARENT:
        raise exc
    return Command(update=cmd.update, goto=cmd.goto, resume=cmd.resume)
