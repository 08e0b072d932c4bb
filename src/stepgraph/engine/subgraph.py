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
