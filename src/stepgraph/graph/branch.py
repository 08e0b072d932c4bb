"""Conditional edges: a router picks the next node(s) or ``Send``s from the fresh state."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin, get_type_hints

from stepgraph.constants import BRANCH_PREFIX, END, START, TASKS
from stepgraph.engine.callable import NodeFunction, coerce_callable
from stepgraph.engine.fresh import fresh_state
from stepgraph.engine.node import Writer
from stepgraph.errors import InvalidUpdateError
from stepgraph.graph.writers import unknown_target
from stepgraph.types import Send

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task


class BranchKeyError(InvalidUpdateError, KeyError):
    """A router returned a value its ``path_map`` does not have (also a ``KeyError``)."""

    def __str__(self) -> str:
        return Exception.__str__(self)


class BranchSpec:
    """A router and its optional ``path_map`` (value -> node)."""

    __slots__ = ("path", "ends", "input_schema", "name")

    def __init__(
        self, path: Callable[..., Any], path_map: dict[Hashable, str] | list[str] | None = None,
        input_schema: Any = None,
    ) -> None:
        self.path = coerce_callable(path)
        self.name = self.path.name
        if isinstance(path_map, dict):
            self.ends: dict[Hashable, str] | None = dict(path_map)
        elif isinstance(path_map, (list, tuple)):
            self.ends = {name: name for name in path_map}
        else:
            self.ends = _literal_ends(path)
        self.input_schema = input_schema


def _literal_ends(path: Any) -> dict[Hashable, str] | None:
    fn = path.func if isinstance(path, NodeFunction) else path
    try:
        hint = get_type_hints(fn).get("return")
    except Exception:
        return None
    if hint is None:
        return None
    if get_origin(hint) is Literal:
        return {v: v for v in get_args(hint)}
    return None


class BranchWriter(Writer):
    """Calls the router after its node and writes the chosen destinations."""

    __slots__ = ("source", "spec", "keys", "mapper", "merge_output", "is_async")

    def __init__(
        self, source: str, spec: BranchSpec, keys: Sequence[str],
        mapper: Callable[[dict[str, Any]], Any] | None, merge_output: bool,
    ) -> None:
        self.source = source
        self.spec = spec
        self.keys = tuple(keys)
        self.mapper = mapper
        self.merge_output = merge_output
        self.is_async = spec.path.is_async

    def _state(self, task: Task, value: Any) -> Any:
        if self.keys == ("__root__",):
            state = fresh_state(task, self.keys).get("__root__")
            return state
        state = fresh_state(task, self.keys)
        if self.merge_output and isinstance(value, dict):
            # returned keys that are not state keys are visible to the router too; state
            # keys come from the fresh (reducer-merged) state
            extra = {k: v for k, v in value.items() if k not in state and k not in self.keys}
            if extra:
                state = {**extra, **state}
        if self.mapper is not None:
            state = self.mapper(state)
        return state

    def run(self, task: Task, value: Any) -> None:
        result = self.spec.path.call(self._state(task, value), task)
        self._write(task, result)

    async def arun(self, task: Task, value: Any) -> None:
        result = await self.spec.path.acall(self._state(task, value), task)
        self._write(task, result)

    def _write(self, task: Task, result: Any) -> None:
        items = result if isinstance(result, (list, tuple)) else [result]
        ends = self.spec.ends
        nodes = task.run.nodes
        for item in items:
            if isinstance(item, Send):
                if item.node == END:
                    raise InvalidUpdateError("Cannot send a packet to the END node", code="SG221")
                if item.node not in nodes:
                    raise unknown_target(task, f"router '{self.spec.name}' sent a Send to", item.node)
                task.writes.append((TASKS, item))
                continue
            if item is None or item == START:
                raise ValueError("Branch did not return a valid destination")
            if ends is not None:
                try:
                    dest = ends[item]
                except KeyError:
                    raise BranchKeyError(
                        f"Router '{self.spec.name}' after node '{self.source}' returned {item!r}, "
                        f"which its path_map does not have (step {task.step}).",
                        code="SG222", hint=f"allowed values: {list(ends)}",
                    ) from None
            else:
                dest = item
            if dest == END:
                continue
            if dest not in nodes:
                raise unknown_target(task, f"router '{self.spec.name}' routed to", dest)
            task.writes.append((BRANCH_PREFIX + dest, None))
