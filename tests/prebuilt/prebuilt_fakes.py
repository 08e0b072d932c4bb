"""Deterministic fakes for the prebuilt tests: a scripted tool-calling chat model.

Needs only langchain-core, so LangGraph's interpreter can import it too (parity runs).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field


class ScriptedModel(BaseChatModel):
    """Turn i answers with the tool calls ``turns[i]`` (none once the script ends).

    The content is the received message contents joined with ``-``; the id is the turn
    number. ``loop=True`` cycles the script forever. ``received`` records every input.
    """

    turns: list[list[dict[str, Any]]] = Field(default_factory=list)
    loop: bool = False
    structured: Any = None
    index: int = 0
    received: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        if self.turns and (self.loop or self.index < len(self.turns)):
            calls = self.turns[self.index % len(self.turns)]
        else:
            calls = []
        text = "-".join(str(m.content) for m in messages)
        message = AIMessage(
            content=text,
            id=str(self.index),
            tool_calls=[{"type": "tool_call", **c} for c in calls],
        )
        self.index += 1
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        specs = [convert_to_openai_tool(t) for t in tools]
        self.bound_tools = [s["function"]["name"] for s in specs]
        return self.bind(tools=specs, **kwargs)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        def answer(messages: Any) -> Any:
            self.received.append(list(messages))
            return self.structured

        return RunnableLambda(answer)


def call(name: str, id: str, /, **args: Any) -> dict[str, Any]:
    """A tool call dict."""
    return {"name": name, "args": args, "id": id}


def summary(messages: list[Any]) -> list[tuple]:
    """Messages without their random ids: (type, content, name, calls or tool_call_id/status)."""
    out = []
    for m in messages:
        if isinstance(m, ToolMessage):
            out.append(("tool", m.content, m.name, m.tool_call_id, m.status))
        elif isinstance(m, AIMessage):
            calls = tuple((c["name"], tuple(sorted(c["args"].items())), c["id"]) for c in m.tool_calls)
            out.append(("ai", m.content, m.name, calls))
        else:
            out.append((m.type, m.content))
    return out
