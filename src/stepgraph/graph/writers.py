"""Writers of ``StateGraph`` nodes: the node's update, its static edges, and the input node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stepgraph._logs import LazyLogger
from stepgraph._updates import is_update_object, object_to_dict, update_as_tuples
from stepgraph.constants import BRANCH_PREFIX, END, ROOT, TASKS
from stepgraph.engine.node import Writer
from stepgraph.engine.subgraph import raise_parent_command
from stepgraph.errors import ErrorCode, InvalidUpdateError, create_error_message
from stepgraph.types import Command, Send

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task

logger = LazyLogger(__name__)


def unknown_target(task: Task, what: str, target: str) -> InvalidUpdateError:
    nodes = sorted(n for n in task.run.nodes if not n.startswith("__"))
    return InvalidUpdateError(
        f"Node '{task.name}' {what} unknown node '{target}' in step {task.step}.",
        code="SG220",
        hint=f"known nodes: {nodes}; add the node or fix the name",
    )


def goto_writes(task: Task, goto: Any) -> list[tuple[str, Any]]:
    """Writes for ``Command.goto``: node names and ``Send`` packets, validated."""
    targets = goto if isinstance(goto, (list, tuple)) else [goto]
    nodes = task.run.nodes
    out: list[tuple[str, Any]] = []
    for target in targets:
        if isinstance(target, Send):
            if target.node == END:
                raise InvalidUpdateError("Cannot send a packet to the END node", code="SG221")
            if target.node not in nodes:
                raise unknown_target(task, "sent a Send to", target.node)
            out.append((TASKS, target))
        elif isinstance(target, str):
            if target == END:
                continue
            if target not in nodes:
                raise unknown_target(task, "returned Command(goto=...) to", target)
            out.append((BRANCH_PREFIX + target, None))
        else:
            raise TypeError(f"In Command.goto, expected Send/str, got {type(target).__name__}")
    return out


class StateUpdateWriter(Writer):
    """Turns what a node returned (dict, object, ``Command``, list, ``None``) into writes."""

    __slots__ = ("keys", "managed", "is_root", "lenient")

    def __init__(
        self, keys: frozenset[str], managed: frozenset[str], is_root: bool, lenient: bool = False
    ) -> None:
        self.keys = keys
        self.managed = managed
        self.is_root = is_root
        self.lenient = lenient
        """A compiled graph used as a node returns its whole state: keep the shared keys."""

    def run(self, task: Task, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, Command):
            self._command(task, value)
        elif isinstance(value, (list, tuple)) and value and any(isinstance(v, Command) for v in value):
            for item in value:
                if isinstance(item, Command):
                    self._command(task, item)
                else:
                    self._update(task, item)
        else:
            self._update(task, value)

    def _command(self, task: Task, cmd: Any) -> None:
        if cmd.graph == Command.PARENT:
            raise_parent_command(task, cmd)
        if cmd.update is not None:
            if self.is_root and not isinstance(cmd.update, dict):
                task.writes.append((ROOT, cmd.update))
            else:
                self._update(task, cmd.update, in_command=True)
        if cmd.goto:
            task.writes.extend(goto_writes(task, cmd.goto))

    def _update(self, task: Task, value: Any, in_command: bool = False) -> None:
        if self.is_root:
            task.writes.append((ROOT, value))
            return
        if isinstance(value, dict):
            items = value.items()
        elif in_command and isinstance(value, (list, tuple)):
            items = value  # type: ignore[assignment]
        elif is_update_object(value):
            items = object_to_dict(value).items()
        else:
            raise InvalidUpdateError(
                create_error_message(
                    message=f"Expected dict, got {value!r}",
                    error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
                )
                + f" (node '{task.name}', step {task.step})",
                code="SG204",
                hint="return a dict of state updates, a Command, or None",
            )
        keys = self.keys
        writes = task.writes
        for key, v in items:
            if key in keys:
                writes.append((key, v))
            elif self.lenient or _subgraph_key(task, key):
                continue
            elif key in self.managed:
                logger.warning("Node '%s' wrote to managed value '%s'; ignoring it.", task.name, key)
            else:
                raise InvalidUpdateError(
                    f"Node '{task.name}' returned key '{key}', which the state does not have "
                    f"(step {task.step}).",
                    code="SG205",
                    hint=f"state keys are {sorted(keys)}; declare '{key}' in the state schema "
                    "(or a node's input schema) or stop returning it",
                )


def _subgraph_key(task: Task, key: str) -> bool:
    """A node that runs a subgraph and returns its output hands back the subgraph's whole
    state: keys of that state the parent lacks are dropped, as for a subgraph node."""
    subgraphs = task.node.subgraphs
    return bool(subgraphs) and task.subgraph_calls > 0 and any(
        key in getattr(g, "channels", ()) for g in subgraphs
    )


class EdgeWriter(Writer):
    """Static edges: trigger each successor (``branch:to:X``) and join barriers."""

    __slots__ = ("writes",)

    def __init__(self, writes: Sequence[tuple[str, Any]]) -> None:
        self.writes = tuple(writes)

    def run(self, task: Task, value: Any) -> None:
        if self.writes:
            task.writes.extend(self.writes)

    def targets(self) -> Sequence[str]:
        return tuple(c for c, _ in self.writes)


class StartWriter(Writer):
    """The hidden ``__start__`` node: graph input -> state keys (unknown keys ignored)."""

    __slots__ = ("keys", "is_root")

    def __init__(self, keys: frozenset[str], is_root: bool) -> None:
        self.keys = keys
        self.is_root = is_root

    def run(self, task: Task, value: Any) -> None:
        if isinstance(value, Command):
            self._command(task, value)
            return
        if value is None:  # update_state(config, None) acting as __start__: no state writes
            return
        if self.is_root:
            task.writes.append((ROOT, value))
            return
        if isinstance(value, dict):
            items = value.items()
        elif is_update_object(value):
            items = object_to_dict(value).items()
        else:
            raise InvalidUpdateError(
                f"Expected dict input, got {type(value).__name__}.", code="SG230",
                hint="pass a dict whose keys are the graph's input keys",
            )
        keys = self.keys
        task.writes.extend([(k, v) for k, v in items if k in keys])

    def _command(self, task: Task, cmd: Any) -> None:
        """A Command that starts a new thread: its update, then its goto."""
        if cmd.update is not None:
            for key, value in update_as_tuples(cmd.update):
                if key not in task.run.graph.channels:
                    raise InvalidUpdateError(
                        f"Command input updates key '{key}', which the state does not have.",
                        code="SG205", hint="update only state keys",
                    )
                task.writes.append((key, value))
        if cmd.goto:
            task.writes.extend(goto_writes(task, cmd.goto))
