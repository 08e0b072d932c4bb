"""The moving parts of ``create_react_agent``: model resolution, the model node, routers.

``ReactAgent`` holds the agent's settings; its methods are the node bodies and routers of
the graph that ``chat_agent_executor.create_react_agent`` assembles.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableLambda, RunnableSequence
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from stepgraph.config import RunnableConfig
from stepgraph.constants import END
from stepgraph.errors import ErrorCode, create_error_message
from stepgraph.prebuilt._runnable import current_runtime
from stepgraph.prebuilt.tool_node import ToolCallWithContext
from stepgraph.runtime import Runtime
from stepgraph.types import Send

NEED_MORE_STEPS = "Sorry, need more steps to process this request."
PROMPT_RUNNABLE_NAME = "Prompt"
Prompt = SystemMessage | str | Callable[[Any], Any] | Runnable


def _state_value(state: Any, key: str, default: Any = None) -> Any:
    return state.get(key, default) if isinstance(state, dict) else getattr(state, key, default)


def _prompt_runnable(prompt: Prompt | None) -> Runnable:
    """The runnable turning the state into the model's input."""
    if prompt is None:
        return RunnableLambda(lambda state: _state_value(state, "messages"), name=PROMPT_RUNNABLE_NAME)
    if isinstance(prompt, str | SystemMessage):
        system = SystemMessage(content=prompt) if isinstance(prompt, str) else prompt
        return RunnableLambda(
            lambda state: [system, *_state_value(state, "messages")], name=PROMPT_RUNNABLE_NAME
        )
    if isinstance(prompt, Runnable):
        return prompt
    if not callable(prompt):
        raise ValueError(f"Got unexpected type for `prompt`: {type(prompt)}")
    names = _injected_names(prompt)

    def kwargs_for(config: Any) -> dict[str, Any]:
        if not names:
            return {}
        runtime = current_runtime()
        values = {
            "config": config, "runtime": runtime, "store": runtime.store,
            "writer": runtime.stream_writer,
        }
        return {n: values[n] for n in names}

    if inspect.iscoroutinefunction(prompt):

        async def acall(state: Any, config: Any) -> Any:
            return await prompt(state, **kwargs_for(config))

        def call(state: Any) -> Any:
            raise TypeError(
                "The prompt is an async function; run the agent with ainvoke()/astream()."
            )

        return RunnableLambda(call, afunc=acall, name=PROMPT_RUNNABLE_NAME)

    def sync_call(state: Any, config: Any) -> Any:
        return prompt(state, **kwargs_for(config))

    return RunnableLambda(sync_call, name=PROMPT_RUNNABLE_NAME)


def _injected_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """Which of ``config``/``runtime``/``store``/``writer`` a prompt function accepts."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    return tuple(n for n in ("config", "runtime", "store", "writer") if n in params)


def _first_model_step(model: Any) -> Any:
    if isinstance(model, RunnableSequence):
        return next(
            (s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel)), model
        )
    return model


def _tool_name(bound: dict[str, Any]) -> str | None:
    if bound.get("type") == "function":
        return bound["function"]["name"]
    return bound.get("name")


def _should_bind_tools(model: Any, tools: Sequence[BaseTool], num_builtin: int = 0) -> bool:
    """False if ``model`` already has these tools bound; raises if it has others."""
    model = _first_model_step(model)
    if not isinstance(model, RunnableBinding) or "tools" not in model.kwargs:
        return True
    bound = model.kwargs["tools"]
    if len(tools) != len(bound) - num_builtin:
        raise ValueError(
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent "
            f"must match Got {len(tools)} tools, expected {len(bound) - num_builtin}"
        )
    names = {n for b in bound if (n := _tool_name(b))}
    if missing := {t.name for t in tools} - names:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return False


def _get_model(model: Any) -> BaseChatModel:
    """The chat model under a prompt sequence and/or a ``bind_tools`` binding."""
    model = _first_model_step(model)
    if isinstance(model, RunnableBinding):
        model = model.bound
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            "Expected `model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), "
            f"got {type(model)}"
        )
    return model


def _validate_chat_history(messages: Sequence[BaseMessage]) -> None:
    """Every tool call of an ``AIMessage`` needs a ``ToolMessage`` answering it."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    pending = [
        call
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]
    if not pending:
        return
    raise ValueError(
        create_error_message(
            message="Found AIMessages with tool_calls that do not have a corresponding "
            f"ToolMessage. Here are the first few of those tool calls: {pending[:3]}.\n\n"
            "Every tool call (LLM requesting to call a tool) in the message history MUST have "
            "a corresponding ToolMessage (result of a tool invocation to return to the LLM) - "
            "this is required by most LLM providers.",
            error_code=ErrorCode.INVALID_CHAT_HISTORY,
        )
    )


def reads_state(router: Callable[..., Any], state_schema: Any) -> Callable[..., Any]:
    """Annotate ``router``'s state parameter with the graph's schema.

    A router with a typed first parameter gets the state after its node's update (its
    reducers applied) coerced to that schema; an untyped one currently sees the node's raw
    update in place of reduced keys, which would cut ``messages`` down to the new ones in
    the state sent with each tool call.
    """

    def route(state: Any) -> Any:
        return router(state)

    route.__name__ = route.__qualname__ = getattr(router, "__name__", "route")
    route.__annotations__ = {"state": state_schema}
    return route


def _resolve_string_model(model: str) -> BaseChatModel:
    try:
        from langchain.chat_models import init_chat_model  # type: ignore[import-not-found]
    except ImportError:
        raise ImportError(
            "Please install langchain (`pip install langchain`) to use '<provider>:<model>' "
            "string syntax for `model` parameter."
        ) from None
    return cast(BaseChatModel, init_chat_model(model))



class ReactAgent:
    """Settings of one agent; its methods are the agent graph's node bodies and routers."""

    def __init__(
        self,
        model: Any,
        tool_classes: list[BaseTool],
        builtin_tools: list[dict[str, Any]],
        *,
        prompt: Prompt | None,
        response_format: Any,
        pre_model_hook: Any,
        post_model_hook: Any,
        state_schema: Any,
        version: str,
        name: str | None,
    ) -> None:
        self.prompt = prompt
        self.response_format = response_format
        self.has_pre_hook = pre_model_hook is not None
        self.has_post_hook = post_model_hook is not None
        self.is_pydantic = isinstance(state_schema, type) and issubclass(state_schema, BaseModel)
        self.version = version
        self.name = name
        self.entry = "pre_model_hook" if self.has_pre_hook else "agent"
        self.return_direct = {t.name for t in tool_classes if t.return_direct}
        self.dynamic = not isinstance(model, str | Runnable) and callable(model)
        self.async_dynamic = self.dynamic and inspect.iscoroutinefunction(model)
        self.model = model
        self.static_model: Runnable | None = None
        if not self.dynamic:
            if isinstance(model, str):
                model = _resolve_string_model(model)
            if _should_bind_tools(model, tool_classes, len(builtin_tools)) and (
                tool_classes or builtin_tools
            ):
                model = cast(BaseChatModel, model).bind_tools([*tool_classes, *builtin_tools])
            self.static_model = _prompt_runnable(prompt) | model

    @property
    def after_model(self) -> str:
        """Where the loop ends: the structured response node, or ``END``."""
        return "generate_structured_response" if self.response_format is not None else END

    # -- the model --------------------------------------------------------------------

    def resolve(self, state: Any, runtime: Runtime[Any]) -> Runnable:
        if self.dynamic:
            return _prompt_runnable(self.prompt) | self.model(state, runtime)
        return cast(Runnable, self.static_model)

    async def aresolve(self, state: Any, runtime: Runtime[Any]) -> Runnable:
        if self.async_dynamic:
            return _prompt_runnable(self.prompt) | await self.model(state, runtime)
        return self.resolve(state, runtime)

    def _refuse_async_model(self) -> None:
        if self.async_dynamic:
            raise RuntimeError(
                "Async model callable provided but agent invoked synchronously. Use "
                "agent.ainvoke() or agent.astream(), or provide a sync model callable."
            )

    def _needs_more_steps(self, state: Any, response: BaseMessage) -> bool:
        remaining = _state_value(state, "remaining_steps", None)
        if remaining is None or not isinstance(response, AIMessage):
            return False
        calls = response.tool_calls
        all_direct = all(c["name"] in self.return_direct for c in calls)
        return (remaining < 1 and all_direct) or (remaining < 2 and bool(calls))

    def _model_input(self, state: Any) -> Any:
        if self.has_pre_hook:
            messages = _state_value(state, "llm_input_messages") or _state_value(state, "messages")
            expected = "'llm_input_messages' or 'messages' key"
        else:
            messages = _state_value(state, "messages")
            expected = "'messages' key"
        if messages is None:
            raise ValueError(f"Expected input to call_model to have {expected}, but got {state}")
        _validate_chat_history(messages)
        if self.is_pydantic:
            state.messages = messages
        else:
            state["messages"] = messages
        return state

    def _finish(self, state: Any, response: BaseMessage) -> dict[str, Any]:
        response.name = self.name
        if self._needs_more_steps(state, response):
            return {"messages": [AIMessage(id=response.id, content=NEED_MORE_STEPS)]}
        return {"messages": [response]}

    def call_model(self, state: Any, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        """The ``agent`` node (sync)."""
        self._refuse_async_model()
        inputs = self._model_input(state)
        return self._finish(state, self.resolve(state, runtime).invoke(inputs, config))

    async def acall_model(self, state: Any, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        """The ``agent`` node (async)."""
        inputs = self._model_input(state)
        model = await self.aresolve(state, runtime)
        return self._finish(state, await model.ainvoke(inputs, config))

    def _structured_input(self, state: Any) -> tuple[list[Any], Any]:
        messages = list(_state_value(state, "messages"))
        schema = self.response_format
        if isinstance(schema, tuple):
            system_prompt, schema = schema
            messages = [SystemMessage(content=system_prompt), *messages]
        return messages, schema

    def structured(self, state: Any, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        """The ``generate_structured_response`` node (sync)."""
        self._refuse_async_model()
        messages, schema = self._structured_input(state)
        chat = _get_model(self.resolve(state, runtime)).with_structured_output(schema)
        return {"structured_response": chat.invoke(messages, config)}

    async def astructured(self, state: Any, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        """The ``generate_structured_response`` node (async)."""
        messages, schema = self._structured_input(state)
        chat = _get_model(await self.aresolve(state, runtime)).with_structured_output(schema)
        return {"structured_response": await chat.ainvoke(messages, config)}

    # -- routing ----------------------------------------------------------------------

    @staticmethod
    def _sends(state: Any, calls: list[Any]) -> list[Send]:
        return [
            Send(
                "tools",
                ToolCallWithContext(__type="tool_call_with_context", tool_call=call, state=state),
            )
            for call in calls
        ]

    def should_continue(self, state: Any) -> str | list[Send]:
        """After ``agent``: the tools (one ``Send`` per call in v2), the post hook, or out."""
        last = _state_value(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return "post_model_hook" if self.has_post_hook else self.after_model
        if self.version == "v1":
            return "tools"
        if self.has_post_hook:
            return "post_model_hook"
        return self._sends(state, last.tool_calls)

    def post_model_hook_router(self, state: Any) -> str | list[Send]:
        """After the post hook: unanswered calls to tools, back to the model after tool
        replies, else out."""
        messages = _state_value(state, "messages")
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
        if pending := [c for c in last_ai.tool_calls if c["id"] not in answered]:
            return self._sends(state, pending)
        if isinstance(messages[-1], ToolMessage):
            return self.entry
        return self.after_model

    def route_tool_responses(self, state: Any) -> str:
        """After ``tools``: stop if a ``return_direct`` tool ran, else back to the model."""
        last: Any = None
        for last in reversed(_state_value(state, "messages")):
            if not isinstance(last, ToolMessage):
                break
            if last.name in self.return_direct:
                return END
        if isinstance(last, AIMessage) and any(
            c["name"] in self.return_direct for c in last.tool_calls
        ):
            return END
        return self.entry
