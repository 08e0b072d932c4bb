"""Prebuilt agent pieces, as in ``langgraph.prebuilt``: ``create_react_agent``, ``ToolNode``...

This package needs langchain-core (``pip install 'stepgraph[langchain]'``); importing it
without raises ``MissingDependencyError`` (code SG601, also an ``ImportError``). Nothing
else in stepgraph imports it, so ``import stepgraph`` stays free of langchain-core.

* ``create_react_agent(model, tools, *, prompt, response_format, ...)``: a tool-calling
  agent graph (``stepgraph.prebuilt.chat_agent_executor``).
* ``ToolNode(tools, *, name="tools", handle_tool_errors=..., messages_key="messages")``
  runs the tool calls of the last ``AIMessage``; ``tools_condition`` routes to it.
* ``InjectedState``, ``InjectedStore``, ``ToolRuntime``: tool arguments filled by the graph.
* ``ValidationNode``: validate tool calls against schemas without running them.

Importing it makes ``stepgraph.types.Command`` a langchain-core ``ToolOutputMixin`` (as
LangGraph's is), so a tool can return a ``Command``.
"""

from stepgraph.prebuilt._deps import MissingDependencyError, require_langchain

require_langchain()

from stepgraph.prebuilt._compat import ensure_command_is_tool_output  # noqa: E402

ensure_command_is_tool_output()

from stepgraph.prebuilt._tool_call_transformer import ToolCallTransformer  # noqa: E402
from stepgraph.prebuilt.chat_agent_executor import (  # noqa: E402
    AgentState,
    AgentStatePydantic,
    AgentStateWithStructuredResponse,
    AgentStateWithStructuredResponsePydantic,
    create_react_agent,
)
from stepgraph.prebuilt.tool_node import (  # noqa: E402
    InjectedState,
    InjectedStore,
    ToolCallRequest,
    ToolNode,
    ToolRuntime,
    tools_condition,
)
from stepgraph.prebuilt.tool_validator import ValidationNode  # noqa: E402

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "InjectedState",
    "InjectedStore",
    "MissingDependencyError",
    "ToolCallRequest",
    "ToolCallTransformer",
    "ToolNode",
    "ToolRuntime",
    "ValidationNode",
    "create_react_agent",
    "tools_condition",
]
