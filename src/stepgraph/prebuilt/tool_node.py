"""``ToolNode``: run the tool calls of the last AI message; ``tools_condition`` routes to it.

Same import path and behaviour as ``langgraph.prebuilt.tool_node``. A ``ToolNode`` is a
langchain-core ``Runnable``: add it to a ``StateGraph`` as a node, or call ``invoke`` /
``ainvoke`` directly (outside a graph it runs with no store and no context).

Input shapes: a state dict (or object) with a ``messages`` key, a list of messages, a list
of tool calls, or the ``{"__type": "tool_call_with_context", "tool_call": ..., "state": ...}``
payload that ``create_react_agent`` sends to run one call. Output: ``{"messages": [...]}``
for a dict input, a list of ``ToolMessage`` for a list input; when a tool returns a
``Command``, a list mixing those ``Command`` objects with message updates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from copy import copy
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.messages import convert_to_messages as _to_messages
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_config_list,
    get_executor_for_config,
    merge_configs,
)
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as create_tool
from pydantic import ValidationError

from stepgraph._running import current_task
from stepgraph.constants import END
from stepgraph.errors import GraphBubbleUp
from stepgraph.prebuilt._injection import (
    InjectedArgs,
    InjectedState,
    InjectedStore,
    ToolRuntime,
    injected_args_of,
    injected_values,
)
from stepgraph.prebuilt._tool_support import (
    INVALID_TOOL_NAME_ERROR_TEMPLATE,
    TOOL_CALL_ERROR_TEMPLATE,
    TOOL_INVOCATION_ERROR_TEMPLATE,
    AsyncToolCallWrapper,
    InputType,
    Output,
    ToolCallRequest,
    ToolCallWithContext,
    ToolCallWrapper,
    ToolInvocationError,
    _default_handle_tool_errors,
    _error_content,
    _filter_errors,
    _infer_handled_types,
    combine_outputs,
    msg_content_output,
    normalize_response,
)

__all__ = [
    "INVALID_TOOL_NAME_ERROR_TEMPLATE",
    "TOOL_CALL_ERROR_TEMPLATE",
    "TOOL_INVOCATION_ERROR_TEMPLATE",
    "AsyncToolCallWrapper",
    "ToolCallWrapper",
    "InjectedState",
    "InjectedStore",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "msg_content_output",
    "tools_condition",
]

class ToolNode(Runnable[Any, Any]):
    """A graph node that runs the tool calls of the last ``AIMessage`` in parallel.

    Args:
        tools: ``BaseTool`` instances or plain functions (turned into tools with ``@tool``).
        name: node name (default ``"tools"``).
        tags: tags added to the config the tools run with.
        handle_tool_errors: what to do when a tool raises. The default (as LangGraph)
            returns an error ``ToolMessage`` for invalid arguments and re-raises any other
            error. ``True`` catches every error (``"Error: {repr(e)}\\n Please fix your
            mistakes."``), a ``str`` is used as the message, an exception type or tuple of
            types catches only those, a callable ``(e) -> str`` catches the types its
            first parameter is annotated with, ``False`` re-raises everything.
        messages_key: the state key holding the messages (input and output).
        wrap_tool_call / awrap_tool_call: interceptors ``(request, execute) -> result``.
    """

    def __init__(
        self,
        tools: Sequence[BaseTool | Callable[..., Any]],
        *,
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: bool
        | str
        | Callable[..., str]
        | type[Exception]
        | tuple[type[Exception], ...] = _default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
    ) -> None:
        self.name = name
        self.tags = list(tags) if tags else None
        self._handle_tool_errors = handle_tool_errors
        self._messages_key = messages_key
        self._wrap_tool_call = wrap_tool_call
        self._awrap_tool_call = awrap_tool_call
        self._tools_by_name: dict[str, BaseTool] = {}
        self._injected: dict[str, InjectedArgs] = {}
        for item in tools:
            tool_ = item if isinstance(item, BaseTool) else create_tool(cast(Any, item))
            self._tools_by_name[tool_.name] = tool_
            self._injected[tool_.name] = injected_args_of(tool_)

    def __repr__(self) -> str:
        return f"ToolNode(tools={list(self._tools_by_name)}, name={self.name!r})"

    @property
    def tools_by_name(self) -> dict[str, BaseTool]:
        """The tools this node can run, by name."""
        return self._tools_by_name

    # -- running ------------------------------------------------------------------------

    def _prepare(self, input: Any, config: RunnableConfig | None) -> tuple[list, InputType, list]:
        config = ensure_config(config)
        if self.tags:
            config = merge_configs(config, {"tags": self.tags})
        calls, input_type = self._parse_input(input)
        task = current_task()
        runtime = task.runtime if task is not None else None
        tools = list(self._tools_by_name.values())
        state = self._extract_state(input) if calls else None
        runtimes = [
            ToolRuntime(
                state=state,
                context=getattr(runtime, "context", None),
                config=cfg,
                stream_writer=getattr(runtime, "stream_writer", None) or (lambda _c: None),
                tool_call_id=call["id"],
                store=getattr(runtime, "store", None),
                tools=tools,
                execution_info=getattr(runtime, "execution_info", None),
                server_info=getattr(runtime, "server_info", None),
            )
            for call, cfg in zip(calls, get_config_list(config, len(calls)), strict=False)
        ]
        return calls, input_type, runtimes

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run every tool call (in parallel threads when there are several)."""
        calls, input_type, runtimes = self._prepare(input, config)
        if len(calls) == 1:
            outputs = [self._run_one(calls[0], input_type, runtimes[0])]
        else:
            with get_executor_for_config(runtimes[0].config if runtimes else None) as pool:
                outputs = list(pool.map(self._run_one, calls, [input_type] * len(calls), runtimes))
        return combine_outputs(outputs, input_type, self._messages_key)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Run every tool call concurrently on the event loop."""
        calls, input_type, runtimes = self._prepare(input, config)
        outputs = await asyncio.gather(
            *(self._arun_one(c, input_type, r) for c, r in zip(calls, runtimes, strict=False))
        )
        return combine_outputs(list(outputs), input_type, self._messages_key)

    def _run_one(self, call: ToolCall, input_type: InputType, runtime: ToolRuntime) -> Output:
        request = ToolCallRequest(
            tool_call=call, tool=self._tools_by_name.get(call["name"]), state=runtime.state,
            runtime=runtime,
        )
        if self._wrap_tool_call is None:
            return self._execute(request, input_type)
        try:
            return self._wrap_tool_call(request, lambda req: self._execute(req, input_type))
        except GraphBubbleUp:
            raise
        except Exception as e:
            if not self._handle_tool_errors:
                raise
            return self._error_message(e, request.tool_call)

    async def _arun_one(
        self, call: ToolCall, input_type: InputType, runtime: ToolRuntime
    ) -> Output:
        request = ToolCallRequest(
            tool_call=call, tool=self._tools_by_name.get(call["name"]), state=runtime.state,
            runtime=runtime,
        )
        if self._awrap_tool_call is None and self._wrap_tool_call is None:
            return await self._aexecute(request, input_type)
        try:
            if self._awrap_tool_call is not None:
                return await self._awrap_tool_call(
                    request, lambda req: self._aexecute(req, input_type)
                )
            wrap = cast(ToolCallWrapper, self._wrap_tool_call)
            return wrap(request, lambda req: self._execute(req, input_type))
        except GraphBubbleUp:
            raise
        except Exception as e:
            if not self._handle_tool_errors:
                raise
            return self._error_message(e, request.tool_call)

    def _execute(self, request: ToolCallRequest, input_type: InputType) -> Output:
        call, tool = request.tool_call, request.tool
        if tool is None:
            return self._unknown_tool(call)
        args = self._inject(call, request.runtime, tool)
        try:
            try:
                response = tool.invoke({**args, "type": "tool_call"}, request.runtime.config)
            except ValidationError as exc:
                raise self._invocation_error(call, exc) from exc
            return normalize_response(response, call, input_type, self._messages_key)
        except GraphBubbleUp:
            raise
        except Exception as e:
            return self._handle_error(e, call)

    async def _aexecute(self, request: ToolCallRequest, input_type: InputType) -> Output:
        call, tool = request.tool_call, request.tool
        if tool is None:
            return self._unknown_tool(call)
        args = self._inject(call, request.runtime, tool)
        try:
            try:
                response = await tool.ainvoke(
                    {**args, "type": "tool_call"}, request.runtime.config
                )
            except ValidationError as exc:
                raise self._invocation_error(call, exc) from exc
            return normalize_response(response, call, input_type, self._messages_key)
        except GraphBubbleUp:
            raise
        except Exception as e:
            return self._handle_error(e, call)

    # -- errors -------------------------------------------------------------------------

    def _invocation_error(self, call: ToolCall, exc: ValidationError) -> ToolInvocationError:
        filtered = _filter_errors(exc, self._injected.get(call["name"]))
        return ToolInvocationError(call["name"], exc, call["args"], filtered)

    def _handle_error(self, e: Exception, call: ToolCall) -> ToolMessage:
        """An error ``ToolMessage`` if ``handle_tool_errors`` covers ``e``; else re-raise."""
        flag = self._handle_tool_errors
        if isinstance(flag, type) and issubclass(flag, Exception):
            handled: tuple[type[Exception], ...] = (flag,)
        elif isinstance(flag, tuple):
            handled = flag
        elif callable(flag) and not isinstance(flag, type):
            handled = _infer_handled_types(flag)
        else:
            handled = (Exception,)
        if not flag or not isinstance(e, handled):
            raise e
        return self._error_message(e, call)

    def _error_message(self, e: Exception, call: ToolCall) -> ToolMessage:
        return ToolMessage(
            content=_error_content(e, self._handle_tool_errors),
            name=call["name"],
            tool_call_id=call["id"],
            status="error",
        )

    def _unknown_tool(self, call: ToolCall) -> ToolMessage:
        if call["name"] in self._tools_by_name:  # a wrapper dropped the tool on purpose
            raise TypeError(f"Tool {call['name']} is not registered with ToolNode")
        content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
            requested_tool=call["name"], available_tools=", ".join(self._tools_by_name)
        )
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    # -- input --------------------------------------------------------------------------

    def _parse_input(self, input: Any) -> tuple[list[ToolCall], InputType]:
        if isinstance(input, list):
            if input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "tool_calls"
            messages, input_type = input, "list"
        elif isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [input["tool_call"]], "tool_calls"
        elif isinstance(input, dict) and (messages := input.get(self._messages_key, [])):
            input_type = "dict"
        elif messages := getattr(input, self._messages_key, []):
            input_type = "dict"
        else:
            raise ValueError("No message found in input")
        for message in reversed(messages):
            if not isinstance(message, BaseMessage):
                message = _to_messages([message])[0]
            if isinstance(message, AIMessage):
                return list(message.tool_calls), input_type
        raise ValueError("No AIMessage found in input")

    def _extract_state(self, input: Any) -> Any:
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return input["state"]
        if isinstance(input, list) and input and isinstance(input[-1], dict) and (
            input[-1].get("type") == "tool_call"
        ):
            return _current_graph_state()
        return input

    def _inject(self, call: ToolCall, runtime: ToolRuntime, tool: BaseTool) -> ToolCall:
        injected = self._injected.get(call["name"])
        if injected is None:
            injected = injected_args_of(tool)
        if not injected:
            return call
        values = injected_values(injected, runtime, call["name"], self._messages_key)
        out = copy(call)
        kept = {k: v for k, v in call["args"].items() if k not in injected.all_keys}
        out["args"] = {**kept, **values}
        return out

    # -- output -------------------------------------------------------------------------

def _current_graph_state() -> Any:
    """The state of the running graph node (for a bare list of tool calls sent to it)."""
    task = current_task()
    if task is None:
        return {}
    try:
        spec = task.node.channels
        keys = [spec] if isinstance(spec, str) else list(spec)
        return task.run.read(keys)
    except Exception:
        return {}


def tools_condition(
    state: list[AnyMessage] | dict[str, Any] | Any, messages_key: str = "messages"
) -> Literal["tools", "__end__"]:
    """``"tools"`` if the last message has tool calls, else ``END`` (``"__end__"``).

    ``state`` is a list of messages, a dict with ``messages_key`` or an object with that
    attribute; ``ValueError`` if it holds no messages.
    """
    if isinstance(state, list):
        last = state[-1]
    elif (isinstance(state, dict) and (messages := state.get(messages_key, []))) or (
        messages := getattr(state, messages_key, [])
    ):
        last = messages[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    calls = last.get("tool_calls") if isinstance(last, dict) else getattr(last, "tool_calls", None)
    if calls:
        return "tools"
    return END
