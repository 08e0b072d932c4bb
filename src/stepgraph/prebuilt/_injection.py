"""Arguments a tool receives from the graph rather than from the model.

``InjectedState`` (the state or one key of it), ``InjectedStore`` (the graph's store),
``ToolRuntime`` (state, context, config, store, stream writer and tool call id together)
and langchain-core's ``InjectedToolCallId`` (filled by langchain-core itself). A tool's
injections are worked out once, when a ``ToolNode`` is built.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Union, get_args, get_origin, get_type_hints

from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.tools.base import _is_injected_arg_type, get_all_basemodel_annotations
from typing_extensions import TypeVar

from stepgraph.stream.tools import emit_output_delta

try:  # langchain-core >= 1.0
    from langchain_core.tools.base import _DirectlyInjectedToolArg
except ImportError:  # pragma: no cover - older langchain-core

    class _DirectlyInjectedToolArg:  # type: ignore[no-redef]
        """Marker base of directly injected argument types."""


__all__ = ["InjectedArgs", "InjectedState", "InjectedStore", "ToolRuntime", "injected_args_of"]

StateT = TypeVar("StateT", default=dict)
ContextT = TypeVar("ContextT", default=None)


class InjectedState(InjectedToolArg):
    """Mark a tool argument as filled from the graph state (hidden from the model).

    ``Annotated[dict, InjectedState]`` gets the whole state; ``Annotated[list,
    InjectedState("messages")]`` gets one key of it.
    """

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """Mark a tool argument as filled with the graph's store (hidden from the model)."""


@dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool parameter annotated ``ToolRuntime`` (or named ``runtime``) receives."""

    state: StateT
    context: ContextT
    config: Any
    stream_writer: Any
    tool_call_id: str | None
    store: Any
    tools: list[BaseTool] = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None

    def emit_output_delta(self, delta: Any) -> None:
        """Stream ``delta`` as this tool call's partial output (``tools`` stream mode's
        ``tool-output-delta``); a no-op when the run does not stream ``tools``."""
        emit_output_delta(delta)


@dataclass
class InjectedArgs:
    """Where each injected parameter of one tool comes from."""

    state: dict[str, str | None]
    """parameter -> state key (``None``: the whole state)."""
    store: str | None = None
    runtime: str | None = None
    all_keys: set[str] = field(default_factory=set)
    """Every injected parameter: values the model sent for them are dropped."""
    optional_state: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.state or self.store or self.runtime or self.all_keys)


def _matches(hint: Any, kind: type) -> bool:
    if isinstance(hint, kind) or (isinstance(hint, type) and issubclass(hint, kind)):
        return True
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType or origin is Annotated:
        return any(_matches(arg, kind) for arg in get_args(hint))
    return isinstance(origin, type) and issubclass(origin, kind)


def _find(hint: Any, kind: type) -> Any:
    """The ``kind`` marker in ``hint`` (instance or class), ``True`` if only nested, else None."""
    found = [arg for arg in get_args(hint) if _matches(arg, kind)]
    if len(found) > 1:
        raise ValueError(
            f"A tool argument should not be annotated with {kind.__name__} more than once. "
            f"Found: {found}"
        )
    if found:
        return found[0]
    return True if _matches(hint, kind) else None


def injected_args_of(tool: BaseTool) -> InjectedArgs:
    """Read the injected parameters of ``tool`` from its input schema and function hints."""
    schema = tool.get_input_schema()
    hints: dict[str, Any] = {}
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if func is not None:
        try:
            hints = get_type_hints(func, include_extras=True)
        except Exception:
            hints = {}
    hints.update(get_all_basemodel_annotations(schema))
    out = InjectedArgs(state={})
    fields = getattr(schema, "model_fields", {}) or {}
    for name, hint in hints.items():
        if name == "return":
            continue
        if _is_injected_arg_type(hint):
            out.all_keys.add(name)
        if name == "runtime" or _find(hint, ToolRuntime):
            out.runtime = name
        if marker := _find(hint, InjectedState):
            key = marker.field if isinstance(marker, InjectedState) else None
            out.state[name] = key
            info = fields.get(name)
            if key and info is not None and not info.is_required():
                out.optional_state.add(name)
        if _find(hint, InjectedStore):
            out.store = name
    return out


def injected_values(
    injected: InjectedArgs, runtime: ToolRuntime, tool_name: str, messages_key: str
) -> dict[str, Any]:
    """The values to add to a tool call's ``args`` for ``injected``."""
    values: dict[str, Any] = {}
    if injected.state:
        state = runtime.state
        if isinstance(state, list):
            wanted = list(injected.state.values())
            if (len(wanted) == 1 and wanted[0] == messages_key) or wanted[0] is None:
                state = {messages_key: state}
            else:
                msg = f"Invalid input to ToolNode. Tool {tool_name} requires graph state dict as input."
                if keys := ", ".join(k for k in wanted if k):
                    msg += f" State should contain fields {keys}."
                raise ValueError(msg)
        for param, key in injected.state.items():
            if not key:
                values[param] = state
            elif isinstance(state, dict):
                if key in state:
                    values[param] = state[key]
                elif param not in injected.optional_state:
                    raise KeyError(key)
            elif hasattr(state, key):
                values[param] = getattr(state, key)
            elif param not in injected.optional_state:
                raise AttributeError(key)
    if injected.store:
        if runtime.store is None:
            raise ValueError(
                "Cannot inject store into tools with InjectedStore annotations - "
                "please compile your graph with a store."
            )
        values[injected.store] = runtime.store
    if injected.runtime:
        values[injected.runtime] = runtime
    return values
