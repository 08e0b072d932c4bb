"""``create_react_agent``: a chat model that calls tools in a loop, on ``StateGraph``.

Same import path and behaviour as ``langgraph.prebuilt.chat_agent_executor``. The graph:
``[pre_model_hook] -> agent -> [post_model_hook] -> tools -> ... -> [generate_structured_response]``.
``agent`` calls the model (tools bound with ``model.bind_tools``); while the reply has tool
calls, ``tools`` (a ``ToolNode``) runs them (``version="v2"``: one ``Send`` per call), then the
model runs again. With fewer than 2 ``remaining_steps`` left and tool calls pending, the
agent answers "Sorry, need more steps to process this request." instead of recursing.
"""

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired, get_type_hints

from langchain_core.language_models import LanguageModelLike
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel
from typing_extensions import TypedDict

from stepgraph.constants import END
from stepgraph.graph import StateGraph
from stepgraph.graph.message import add_messages
from stepgraph.managed import RemainingSteps
from stepgraph.prebuilt._agent import (  # noqa: F401 - _should_bind_tools: LangGraph's name here
    NEED_MORE_STEPS,
    Prompt,
    ReactAgent,
    _should_bind_tools,
    reads_state,
)
from stepgraph.prebuilt._runnable import SyncAsyncNode
from stepgraph.prebuilt.tool_node import ToolNode

__all__ = [
    "NEED_MORE_STEPS",
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "create_react_agent",
    "create_tool_calling_executor",
]

StructuredResponse = dict | BaseModel
StateSchemaType = type
"""The type of a ``state_schema`` argument (a TypedDict or pydantic model class)."""
StructuredResponseSchema = dict | type[BaseModel]


class AgentState(TypedDict):
    """The state of the agent: the conversation and the steps left."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: NotRequired[RemainingSteps]


class AgentStatePydantic(BaseModel):
    """``AgentState`` as a pydantic model."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps = 25


class AgentStateWithStructuredResponse(AgentState):
    """``AgentState`` plus the ``structured_response`` that ``response_format`` produces."""

    structured_response: StructuredResponse


class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
    """``AgentStatePydantic`` plus ``structured_response``."""

    structured_response: StructuredResponse


def create_react_agent(
    model: str | LanguageModelLike | Callable[..., Any],
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | ToolNode,
    *,
    prompt: Prompt | None = None,
    response_format: StructuredResponseSchema | tuple[str, StructuredResponseSchema] | None = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
    state_schema: Any = None,
    context_schema: type[Any] | None = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: Literal["v1", "v2"] = "v2",
    name: str | None = None,
    **deprecated_kwargs: Any,
) -> Any:
    """Build a ReAct agent graph (a ``CompiledStateGraph``); see the module docstring.

    ``model``: a chat model (tools are bound with ``bind_tools`` unless already bound), a
    ``"provider:model"`` string (needs ``langchain``), or ``(state, runtime) -> model``
    (sync or async). ``tools``: tools, functions, provider tool dicts, or a ``ToolNode``.
    ``prompt``: str or ``SystemMessage`` (prepended), callable or ``Runnable`` (maps the
    state to the model input). ``response_format``: schema (or ``(prompt, schema)``) for a
    final ``model.with_structured_output`` call stored as ``structured_response``.
    ``pre_model_hook`` / ``post_model_hook``: nodes run before / after the model; the pre
    hook may return ``llm_input_messages`` to feed the model without changing the state.
    ``state_schema`` must have ``messages`` and ``remaining_steps``.
    """
    if (config_schema := deprecated_kwargs.pop("config_schema", None)) is not None:
        context_schema = context_schema or config_schema
    if deprecated_kwargs:
        raise TypeError(
            f"create_react_agent() got unexpected keyword arguments: {deprecated_kwargs}"
        )
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    state_schema = _check_state_schema(state_schema, response_format)
    builtin_tools: list[dict[str, Any]] = []
    if isinstance(tools, ToolNode):
        tool_node = tools
    else:
        builtin_tools = [t for t in tools if isinstance(t, dict)]
        tool_node = ToolNode([t for t in tools if not isinstance(t, dict)])
    tool_classes = list(tool_node.tools_by_name.values())
    agent = ReactAgent(
        model, tool_classes, builtin_tools, prompt=prompt, response_format=response_format,
        pre_model_hook=pre_model_hook, post_model_hook=post_model_hook,
        state_schema=state_schema, version=version, name=name,
    )
    workflow = StateGraph(state_schema, context_schema=context_schema)
    workflow.add_node(
        "agent",
        SyncAsyncNode(agent.call_model, agent.acall_model, name="agent"),
        input_schema=_model_input_schema(state_schema, pre_model_hook is not None),
    )
    if tool_classes:
        workflow.add_node("tools", tool_node)
    if pre_model_hook is not None:
        workflow.add_node("pre_model_hook", pre_model_hook)
        workflow.add_edge("pre_model_hook", "agent")
    workflow.set_entry_point(agent.entry)
    if post_model_hook is not None:
        workflow.add_node("post_model_hook", post_model_hook)
        workflow.add_edge("agent", "post_model_hook")
    if response_format is not None:
        workflow.add_node(
            "generate_structured_response",
            SyncAsyncNode(agent.structured, agent.astructured, name="generate_structured_response"),
        )
    if tool_classes:
        _add_tool_routing(workflow, agent, state_schema)
    elif response_format is not None:
        last = "post_model_hook" if post_model_hook is not None else "agent"
        workflow.add_edge(last, "generate_structured_response")
    return workflow.compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name,
    )


def _check_state_schema(state_schema: Any, response_format: Any) -> Any:
    """The given schema (checked for the required keys) or the default one."""
    if state_schema is None:
        return AgentStateWithStructuredResponse if response_format is not None else AgentState
    required = {"messages", "remaining_steps"}
    if response_format is not None:
        required.add("structured_response")
    if missing := required - set(get_type_hints(state_schema)):
        raise ValueError(f"Missing required key(s) {missing} in state_schema")
    return state_schema


def _model_input_schema(state_schema: Any, has_pre_hook: bool) -> Any:
    """The ``agent`` node's input: the state, plus ``llm_input_messages`` with a pre hook."""
    if not has_pre_hook:
        return state_schema
    if isinstance(state_schema, type) and issubclass(state_schema, BaseModel):
        from pydantic import create_model

        return create_model(
            "CallModelInputSchema",
            llm_input_messages=(list[AnyMessage], ...),
            __base__=state_schema,
        )

    class CallModelInputSchema(state_schema):  # type: ignore[misc,valid-type]
        llm_input_messages: list[AnyMessage]

    return CallModelInputSchema


def _add_tool_routing(workflow: StateGraph, agent: ReactAgent, state_schema: Any) -> None:
    """The conditional edges after ``post_model_hook``, ``agent`` and ``tools``."""
    after = agent.after_model
    if agent.has_post_hook:
        workflow.add_conditional_edges(
            "post_model_hook",
            reads_state(agent.post_model_hook_router, state_schema),
            path_map=[agent.entry, "tools", after],
        )
        agent_paths = ["post_model_hook"]
    else:
        agent_paths = ["tools", after]
    workflow.add_conditional_edges(
        "agent", reads_state(agent.should_continue, state_schema), path_map=agent_paths
    )
    if agent.return_direct:
        workflow.add_conditional_edges(
            "tools",
            reads_state(agent.route_tool_responses, state_schema),
            path_map=[agent.entry, END],
        )
    else:
        workflow.add_edge("tools", agent.entry)


create_tool_calling_executor = create_react_agent
"""Old name of ``create_react_agent``."""
