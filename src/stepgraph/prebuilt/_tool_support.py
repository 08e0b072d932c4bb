"""Pieces of ``ToolNode``: error templates and handling, and checking what tools return."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from copy import deepcopy
from dataclasses import dataclass, replace
from types import UnionType
from typing import Any, Literal, TypedDict, Union, cast, get_args, get_origin, get_type_hints

from langchain_core.messages import RemoveMessage, ToolCall, ToolMessage, convert_to_messages
from langchain_core.tools import BaseTool
from langchain_core.tools.base import TOOL_MESSAGE_BLOCK_TYPES, ToolException
from pydantic import ValidationError

from stepgraph.graph.message import REMOVE_ALL_MESSAGES
from stepgraph.prebuilt._injection import InjectedArgs, ToolRuntime
from stepgraph.types import Command, Send

InputType = Literal["list", "dict", "tool_calls"]
Output = ToolMessage | Command | list[ToolMessage | Command]

INVALID_TOOL_NAME_ERROR_TEMPLATE = (
    "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
)
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
TOOL_INVOCATION_ERROR_TEMPLATE = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)



class ToolCallWithContext(TypedDict):
    """One tool call plus the state it was made in: the ``Send`` payload of the agent."""

    __type: Literal["tool_call_with_context"]
    tool_call: ToolCall
    state: Any


@dataclass
class ToolCallRequest:
    """What a ``wrap_tool_call`` interceptor receives."""

    tool_call: ToolCall
    tool: BaseTool | None
    state: Any
    runtime: ToolRuntime

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A copy with fields replaced (``state`` also replaces ``runtime.state``)."""
        request = replace(self, **overrides)
        if "state" in overrides and isinstance(request.runtime, ToolRuntime):
            request = replace(request, runtime=replace(request.runtime, state=request.state))
        return request


ToolCallWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Any]], Any]
AsyncToolCallWrapper = Callable[
    [ToolCallRequest, Callable[[ToolCallRequest], Awaitable[Any]]], Awaitable[Any]
]


def msg_content_output(output: Any) -> str | list[dict]:
    """Tool output as ``ToolMessage`` content: strings and content blocks as is, else JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(
        isinstance(x, dict) and x.get("type") in TOOL_MESSAGE_BLOCK_TYPES for x in output
    ):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except Exception:
        return str(output)


class ToolInvocationError(ToolException):
    """The model called a tool with arguments that fail the tool's schema."""

    def __init__(
        self,
        tool_name: str,
        source: ValidationError,
        tool_kwargs: dict[str, Any],
        filtered_errors: list[Any] | None = None,
    ) -> None:
        if filtered_errors is not None:
            shown = "\n".join(
                f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err.get('msg', 'Unknown error')}"
                for err in filtered_errors
            )
        else:
            shown = str(source)
        self.message = TOOL_INVOCATION_ERROR_TEMPLATE.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error=shown
        )
        self.tool_name = tool_name
        self.tool_kwargs = tool_kwargs
        self.source = source
        self.filtered_errors = filtered_errors
        super().__init__(self.message)


def _default_handle_tool_errors(e: Exception) -> str:
    """LangGraph's default: report invalid arguments to the model, re-raise anything else."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def _infer_handled_types(handler: Callable[..., str]) -> tuple[type[Exception], ...]:
    """The exception types named by the annotation of the handler's first parameter."""
    params = list(inspect.signature(handler).parameters.values())
    if not params:
        return (Exception,)
    first = params[1] if params[0].name in ("self", "cls") and len(params) == 2 else params[0]
    hints = get_type_hints(handler)
    if first.name not in hints:
        return (Exception,)
    hint = hints[first.name]
    if get_origin(hint) in (Union, UnionType):
        args = get_args(hint)
        if all(isinstance(a, type) and issubclass(a, Exception) for a in args):
            return tuple(args)
        raise ValueError(
            "All types in the error handler error annotation must be Exception types. "
            "For example, `def custom_handler(e: Union[ValueError, TypeError])`. "
            f"Got '{hint}' instead."
        )
    if isinstance(hint, type) and issubclass(hint, Exception):
        return (hint,)
    raise ValueError(
        "Arbitrary types are not supported in the error handler signature. Please annotate "
        "the error with either a specific Exception type or a union of Exception types. "
        "For example, `def custom_handler(e: ValueError)` or "
        f"`def custom_handler(e: Union[ValueError, TypeError])`. Got '{hint}' instead."
    )


def _error_content(e: Exception, flag: Any) -> str:
    if isinstance(flag, (bool, tuple)) or (isinstance(flag, type) and issubclass(flag, Exception)):
        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e))
    if isinstance(flag, str):
        return flag
    if callable(flag):
        return flag(e)
    raise ValueError(
        "Got unexpected type of `handle_tool_error`. Expected bool, str or callable. "
        f"Received: {flag}"
    )


def _filter_errors(exc: ValidationError, injected: InjectedArgs | None) -> list[Any]:
    """Validation errors about arguments the model controls, without injected values."""
    hidden: set[str] = set()
    if injected:
        hidden.update(injected.state)
        hidden.update(k for k in (injected.store, injected.runtime) if k)
    out = []
    for err in exc.errors():
        if err["loc"] and err["loc"][0] not in hidden:
            err = {**err}
            if isinstance(err.get("input"), dict):
                err["input"] = {k: v for k, v in err["input"].items() if k not in hidden}
            out.append(err)
    return out


def normalize_response(
    response: Any, call: ToolCall, input_type: InputType, messages_key: str
) -> Output:
    """Check a tool's return value: a ``ToolMessage``, a ``Command`` or a list of them."""
    if isinstance(response, Command):
        return check_command(response, call, input_type, messages_key)
    if isinstance(response, ToolMessage):
        response.content = cast(Any, msg_content_output(response.content))
        return response
    if isinstance(response, list):
        if all(isinstance(r, (Command, ToolMessage)) for r in response):
            return _check_command_list(response, call, input_type, messages_key)
        raise TypeError(
            f"Tool {call['name']} returned a list with invalid element types: "
            "expected all Command or ToolMessage"
        )
    raise TypeError(f"Tool {call['name']} returned unexpected type: {type(response)}")

def _check_command_list(
    response: list[Any], call: ToolCall, input_type: InputType, messages_key: str
) -> list[ToolMessage | Command]:
    expected = call["id"]
    count = 0
    for item in response:
        if isinstance(item, ToolMessage):
            count += item.tool_call_id == expected
        elif isinstance(item, Command) and isinstance(item.update, dict):
            for m in item.update.get(messages_key, []):
                count += isinstance(m, ToolMessage) and m.tool_call_id == expected
    if count != 1:
        raise ValueError(
            f"Tool {call['name']} returned a list with {count} messages bound to "
            f"tool_call_id {expected!r}; expected exactly one terminating ToolMessage."
        )
    out: list[ToolMessage | Command] = []
    for item in response:
        if isinstance(item, Command):
            out.append(check_command(item, call, input_type, messages_key, require_reply=False))
        else:
            item.content = cast(Any, msg_content_output(item.content))
            out.append(item)
    return out

def check_command(
    command: Command,
    call: ToolCall,
    input_type: InputType,
    messages_key: str,
    *,
    require_reply: bool = True,
) -> Command:
    """Name the tool's reply in ``command.update``; insist on one for the current graph."""
    if isinstance(command.update, dict):
        if input_type not in ("dict", "tool_calls"):
            raise ValueError(
                "Tools can provide a dict in Command.update only when using dict with "
                f"'{messages_key}' key as ToolNode input, got: {command.update} "
                f"for tool '{call['name']}'"
            )
        command = deepcopy(command)
        updates = command.update.get(messages_key, [])
    elif isinstance(command.update, list):
        if input_type != "list":
            raise ValueError(
                "Tools can provide a list of messages in Command.update only when using "
                f"list of messages as ToolNode input, got: {command.update} for tool "
                f"'{call['name']}'"
            )
        command = deepcopy(command)
        updates = command.update
    else:
        return command
    messages = convert_to_messages(updates)
    if messages == [RemoveMessage(id=REMOVE_ALL_MESSAGES)]:
        return command
    replied = False
    for m in messages:
        if isinstance(m, ToolMessage) and m.tool_call_id == call["id"]:
            m.name = call["name"]
            replied = True
    if require_reply and command.graph is None and not replied:
        example = (
            '`Command(update={"messages": [ToolMessage("Success", tool_call_id=tool_call_id), ...]}, ...)`'
            if input_type == "dict"
            else '`Command(update=[ToolMessage("Success", tool_call_id=tool_call_id), ...], ...)`'
        )
        raise ValueError(
            f"Expected to have a matching ToolMessage in Command.update for tool "
            f"'{call['name']}', got: {messages}. Every tool call (LLM requesting to call "
            "a tool) in the message history MUST have a corresponding ToolMessage. "
            f"You can fix it by modifying the tool to return {example}."
        )
    return command

def combine_outputs(outputs: list[Output], input_type: InputType, messages_key: str) -> Any:
    """The node's update: messages in the input's shape, plus any ``Command``s."""
    flat: list[ToolMessage | Command] = []
    for output in outputs:
        flat.extend(output if isinstance(output, list) else [output])
    if not any(isinstance(o, Command) for o in flat):
        return flat if input_type == "list" else {messages_key: flat}
    combined: list[Any] = []
    parent: Command | None = None
    for o in flat:
        if not isinstance(o, Command):
            combined.append([o] if input_type == "list" else {messages_key: [o]})
        elif (
            o.graph == Command.PARENT
            and isinstance(o.goto, list)
            and all(isinstance(s, Send) for s in o.goto)
        ):
            goto = [*(parent.goto if parent else []), *o.goto]
            parent = Command(graph=Command.PARENT, goto=goto)
        else:
            combined.append(o)
    if parent is not None:
        combined.append(parent)
    return combined
