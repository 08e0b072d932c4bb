"""Turning a run's input into channel writes: plain input, or a ``Command``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph._updates import object_to_dict
from stepgraph.constants import BRANCH_PREFIX, END, MISSING, TASKS
from stepgraph.errors import EmptyInputError, InvalidUpdateError
from stepgraph.types import Command, Send

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.pregel.main import Pregel
    from stepgraph.types import Command


def map_input(graph: Pregel, value: Any) -> list[tuple[str, Any]]:
    """Writes for fresh input. Keys the input channels do not know are ignored."""
    channels = graph.input_channels
    if isinstance(channels, str):
        return [(channels, value)]
    if not isinstance(value, dict):
        if hasattr(value, "model_dump") or hasattr(value, "__dataclass_fields__"):
            value = object_to_dict(value)
        else:
            raise InvalidUpdateError(
                f"Expected dict input for channels {list(channels)}, got {type(value).__name__}.",
                code="SG230",
                hint="pass a dict whose keys are the graph's input keys",
            )
    return [(k, v) for k, v in value.items() if k in channels]


def map_command(loop: RunLoop, cmd: Command) -> tuple[list[tuple[str, Any]], Any]:
    """Writes of a ``Command`` given as input (update, goto) and its resume value."""
    if cmd.graph == Command.PARENT:
        raise InvalidUpdateError("There is no parent graph", code="SG240",
                                 hint="Command.PARENT only works inside a subgraph")
    if cmd.update is None and cmd.resume is None and not cmd.goto:
        raise EmptyInputError("Received empty Command input", code="SG302",
                              hint="set update=, goto= or resume=")
    writes: list[tuple[str, Any]] = []
    gotos = cmd.goto if isinstance(cmd.goto, (list, tuple)) else [cmd.goto]
    nodes = loop.nodes
    for target in gotos:
        if isinstance(target, Send):
            if target.node not in nodes:
                raise InvalidUpdateError(
                    f"Command(goto=Send('{target.node}', ...)) names an unknown node.",
                    code="SG220", hint=f"known nodes: {sorted(nodes)}",
                )
            writes.append((TASKS, target))
        elif isinstance(target, str):
            if target == END:
                continue
            if target not in nodes:
                raise InvalidUpdateError(
                    f"Command(goto='{target}') names an unknown node.",
                    code="SG221", hint=f"known nodes: {sorted(nodes)}",
                )
            writes.append((BRANCH_PREFIX + target, None))
        else:
            raise TypeError(f"In Command.goto, expected Send/str, got {type(target).__name__}")
    if cmd.update is not None:
        writes.extend(loop.graph.map_update(cmd.update, source="Command input"))
    resume = MISSING if cmd.resume is None else cmd.resume
    return writes, resume
