"""A LangGraph Platform app built with langchain v1's ``create_agent``, served by stepgraph.

Nothing here mentions stepgraph: ``stepgraph serve --config examples/langchain_agent/langgraph.json``
installs the ``langgraph`` alias before importing this file, so ``create_agent`` builds a
stepgraph graph. To run it as a script on stepgraph::

    python -m stepgraph.compat examples/langchain_agent/agent.py

The chat model is an offline fake (no network, no key): it asks for the weather of the city
the user names, then answers with what the tool said.

* ``agent``: tools only;
* ``agent_hitl``: a human approves, edits or rejects each ``get_weather`` call
  (``HumanInTheLoopMiddleware``); resume with ``Command(resume={"decisions": [...]})``.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class WeatherModel(BaseChatModel):
    """Calls ``get_weather`` for the last word of the user's question, then reports it."""

    @property
    def _llm_type(self) -> str:
        return "offline-weather"

    def bind_tools(self, tools: Any, **kwargs: Any) -> WeatherModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"It is {last.content}.")
        elif isinstance(last, HumanMessage):
            city = str(last.content).rstrip("?!. ").split()[-1]
            call_id = f"call-{len(messages)}"
            reply = AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": city},
                                                       "id": call_id}])
        else:
            reply = AIMessage(content="How can I help?")
        return ChatResult(generations=[ChatGeneration(message=reply)])


agent = create_agent(WeatherModel(), [get_weather], system_prompt="You report the weather.")

def reviewed_agent(checkpointer: Any = None) -> Any:
    """The agent whose weather calls a human reviews (the server supplies the checkpointer)."""
    return create_agent(
        WeatherModel(), [get_weather], checkpointer=checkpointer,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"get_weather": True})],
    )


agent_hitl = reviewed_agent()


if __name__ == "__main__":
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    print("runtime:", type(agent).__module__)
    out = agent.invoke({"messages": [HumanMessage("What is the weather in Paris?")]})
    for message in out["messages"]:
        print(f"{type(message).__name__}: {message.content or message.tool_calls}")
    reviewed = reviewed_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "demo"}}
    paused = reviewed.invoke({"messages": [HumanMessage("And in Rome?")]}, config, version="v2")
    print("paused for review:", paused.interrupts[0].value["action_requests"][0]["args"])
    done = reviewed.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    print("after approval:", done["messages"][-1].content)
