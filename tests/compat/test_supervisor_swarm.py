"""langgraph-supervisor and langgraph-swarm build and run stepgraph graphs through the alias
(their own suites are run outside the project: docs/compat.md)."""

from __future__ import annotations

import importlib.util

import pytest
from compat_fakes import ScriptedChatModel, tool_call
from compat_support import HAVE_LANGCHAIN

HAVE_SUPERVISOR = HAVE_LANGCHAIN and importlib.util.find_spec("langgraph_supervisor") is not None
HAVE_SWARM = HAVE_LANGCHAIN and importlib.util.find_spec("langgraph_swarm") is not None

if HAVE_LANGCHAIN:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    from stepgraph.checkpoint.memory import InMemorySaver
    from stepgraph.graph.compile import CompiledStateGraph

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


@pytest.mark.skipif(not HAVE_SUPERVISOR, reason="langgraph-supervisor is not installed")
def test_supervisor_hands_off_to_a_worker_and_back() -> None:
    from langgraph_supervisor import create_supervisor

    worker = create_agent(
        ScriptedChatModel(replies=[tool_call("add", {"a": 2, "b": 3}, "w1"), AIMessage(content="2+3 is 5")]),
        [add], name="math_expert",
    )
    boss = ScriptedChatModel(replies=[tool_call("transfer_to_math_expert", {}, "s1"),
                                      AIMessage(content="The answer is 5.")])
    app = create_supervisor([worker], model=boss).compile(checkpointer=InMemorySaver())
    assert isinstance(app, CompiledStateGraph)
    config = {"configurable": {"thread_id": "sup"}}
    out = app.invoke({"messages": [HumanMessage("what is 2+3?")]}, config)
    contents = [m.content for m in out["messages"]]
    assert "2+3 is 5" in contents and contents[-1] == "The answer is 5."
    names = [getattr(m, "name", None) for m in out["messages"] if isinstance(m, AIMessage)]
    assert "math_expert" in names and "supervisor" in names
    updates = [next(iter(c)) for c in app.stream({"messages": [HumanMessage("again")]}, config,
                                                  stream_mode="updates")]
    assert updates and updates[0] == "supervisor"


@pytest.mark.skipif(not HAVE_SWARM, reason="langgraph-swarm is not installed")
def test_swarm_hands_off_between_agents_and_remembers_the_active_one() -> None:
    from langgraph_swarm import create_handoff_tool, create_swarm

    alice = create_agent(
        ScriptedChatModel(replies=[tool_call("transfer_to_bob", {}, "a1")]),
        [create_handoff_tool(agent_name="bob")], name="alice",
    )
    bob = create_agent(
        ScriptedChatModel(replies=[AIMessage(content="Bob here."), AIMessage(content="Still Bob.")]),
        [create_handoff_tool(agent_name="alice")], name="bob",
    )
    app = create_swarm([alice, bob], default_active_agent="alice").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "swarm"}}
    first = app.invoke({"messages": [HumanMessage("I want Bob")]}, config)
    assert first["active_agent"] == "bob" and first["messages"][-1].content == "Bob here."
    assert any(isinstance(m, ToolMessage) for m in first["messages"])
    second = app.invoke({"messages": [HumanMessage("hello?")]}, config)
    assert second["messages"][-1].content == "Still Bob."  # the swarm resumed with bob
