"""langchain v1's ``create_agent`` running on stepgraph through the ``langgraph`` alias.

A scripted offline chat model calls tools; the agent runs with stepgraph's checkpointers,
the human-in-the-loop middleware pauses it before a tool and a ``Command(resume=...)``
continues it, summarization rewrites the history, tools reach the store.
"""

from __future__ import annotations

import pytest
from compat_fakes import ScriptedChatModel, tool_call
from compat_support import HAVE_LANGCHAIN, SKIP_REASON

pytestmark = pytest.mark.skipif(not HAVE_LANGCHAIN, reason=SKIP_REASON)

if HAVE_LANGCHAIN:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware, SummarizationMiddleware
    from langchain.tools import ToolRuntime
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    import stepgraph.checkpoint.memory
    import stepgraph.graph.compile
    from stepgraph.checkpoint.memory import InMemorySaver
    from stepgraph.checkpoint.sqlite import SqliteSaver
    from stepgraph.store.memory import InMemoryStore
    from stepgraph.types import Command

    CALLS: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        CALLS.append(city)
        return f"sunny in {city}"

    @tool
    def remember(fact: str, runtime: ToolRuntime) -> str:
        """Store a fact in long-term memory."""
        runtime.store.put(("facts",), "last", {"fact": fact})
        return "stored"

    @tool
    def recall() -> str:
        """Read the stored fact back through langgraph.config.get_store()."""
        from langgraph.config import get_store

        item = get_store().get(("facts",), "last")
        return item.value["fact"] if item else "nothing"


def _weather_model() -> ScriptedChatModel:
    return ScriptedChatModel(replies=[
        tool_call("get_weather", {"city": "Paris"}, "call-1"),
        AIMessage(content="It is sunny in Paris."),
    ])


def _kinds(messages: list) -> list[str]:
    return [type(m).__name__ for m in messages]


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def test_the_agent_is_a_stepgraph_graph() -> None:
    import langgraph.checkpoint.memory
    import langgraph.graph.state

    agent = create_agent(_weather_model(), [get_weather])
    assert isinstance(agent, stepgraph.graph.compile.CompiledStateGraph)
    assert langgraph.graph.state.CompiledStateGraph is stepgraph.graph.compile.CompiledStateGraph
    assert langgraph.checkpoint.memory.InMemorySaver is stepgraph.checkpoint.memory.InMemorySaver


def test_tool_loop_sync() -> None:
    model = _weather_model()
    out = create_agent(model, [get_weather]).invoke({"messages": [HumanMessage("weather in Paris?")]})
    assert _kinds(out["messages"]) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert out["messages"][2].content == "sunny in Paris" and out["messages"][2].tool_call_id == "call-1"
    assert out["messages"][-1].content == "It is sunny in Paris."
    assert CALLS == ["Paris"]
    assert _kinds(model.calls[1]) == ["HumanMessage", "AIMessage", "ToolMessage"]


async def test_tool_loop_async() -> None:
    out = await create_agent(_weather_model(), [get_weather]).ainvoke(
        {"messages": [HumanMessage("weather in Paris?")]})
    assert out["messages"][-1].content == "It is sunny in Paris."
    assert CALLS == ["Paris"]


def test_stream_updates_names_each_node() -> None:
    agent = create_agent(_weather_model(), [get_weather])
    chunks = list(agent.stream({"messages": [HumanMessage("hi")]}, stream_mode="updates"))
    assert [next(iter(c)) for c in chunks] == ["model", "tools", "model"]
    assert isinstance(chunks[1]["tools"]["messages"][0], ToolMessage)


def test_checkpointer_keeps_the_conversation() -> None:
    model = ScriptedChatModel(replies=[AIMessage(content="first"), AIMessage(content="second")])
    agent = create_agent(model, [], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("one")]}, config)
    out = agent.invoke({"messages": [HumanMessage("two")]}, config)
    assert [m.content for m in out["messages"]] == ["one", "first", "two", "second"]
    assert len(list(agent.get_state_history(config))) >= 4


def _hitl_agent(checkpointer: object, model: ScriptedChatModel | None = None):
    return create_agent(
        model or _weather_model(), [get_weather], checkpointer=checkpointer,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"get_weather": True})],
    )


def test_human_in_the_loop_interrupts_then_approve_resumes() -> None:
    agent = _hitl_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    chunks = list(agent.stream({"messages": [HumanMessage("weather?")]}, config, stream_mode="updates"))
    assert [next(iter(c)) for c in chunks] == ["model", "__interrupt__"]
    assert CALLS == []
    state = agent.get_state(config)
    (pending,) = state.interrupts
    (request,) = pending.value["action_requests"]
    assert request["name"] == "get_weather" and request["args"] == {"city": "Paris"}
    out = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert CALLS == ["Paris"]
    assert out["messages"][-1].content == "It is sunny in Paris."
    assert agent.get_state(config).next == ()


def test_human_in_the_loop_edit_and_reject() -> None:
    agent = _hitl_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "edit"}}
    agent.invoke({"messages": [HumanMessage("weather?")]}, config)
    edited = {"type": "edit", "edited_action": {"name": "get_weather", "args": {"city": "Rome"}}}
    agent.invoke(Command(resume={"decisions": [edited]}), config)
    assert CALLS == ["Rome"]
    CALLS.clear()

    model = ScriptedChatModel(replies=[tool_call("get_weather", {"city": "Oslo"}, "call-9"),
                                       AIMessage(content="ok, not checking")])
    agent = _hitl_agent(InMemorySaver(), model)
    config = {"configurable": {"thread_id": "reject"}}
    agent.invoke({"messages": [HumanMessage("weather?")]}, config)
    out = agent.invoke(Command(resume={"decisions": [{"type": "reject", "message": "no"}]}), config)
    assert CALLS == []
    rejected = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert rejected and rejected[0].status == "error" and "no" in rejected[0].content
    assert out["messages"][-1].content == "ok, not checking"


def test_human_in_the_loop_v2_output_carries_the_interrupt() -> None:
    agent = _hitl_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "v2"}}
    result = agent.invoke({"messages": [HumanMessage("weather?")]}, config, version="v2")
    (pending,) = result.interrupts
    answer = {pending.id: {"decisions": [{"type": "approve"}]}}
    result = agent.invoke(Command(resume=answer), config, version="v2")
    assert result.interrupts == () and result.value["messages"][-1].content == "It is sunny in Paris."


async def test_human_in_the_loop_async_with_sqlite(tmp_path) -> None:
    from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    config = {"configurable": {"thread_id": "sql"}}
    model = _weather_model()  # one scripted model service for both agents
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        agent = _hitl_agent(saver, model)
        await agent.ainvoke({"messages": [HumanMessage("weather?")]}, config)
        assert (await agent.aget_state(config)).interrupts
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        agent = _hitl_agent(saver, model)  # as a new process would: resume from the file
        out = await agent.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert CALLS == ["Paris"] and out["messages"][-1].content == "It is sunny in Paris."


def test_human_in_the_loop_sync_sqlite(tmp_path) -> None:
    config = {"configurable": {"thread_id": "s"}}
    model = _weather_model()
    with SqliteSaver.from_conn_string(str(tmp_path / "s.sqlite")) as saver:
        _hitl_agent(saver, model).invoke({"messages": [HumanMessage("weather?")]}, config)
    with SqliteSaver.from_conn_string(str(tmp_path / "s.sqlite")) as saver:
        out = _hitl_agent(saver, model).invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["messages"][-1].content == "It is sunny in Paris."


def test_summarization_middleware_replaces_old_messages() -> None:
    summarizer = ScriptedChatModel(replies=[AIMessage(content="SUMMARY: talked about the weather")])
    model = ScriptedChatModel(replies=[AIMessage(content="a1"), AIMessage(content="a2"),
                                       AIMessage(content="a3")])
    agent = create_agent(
        model, [], checkpointer=InMemorySaver(),
        middleware=[SummarizationMiddleware(summarizer, trigger=("messages", 4), keep=("messages", 2))],
    )
    config = {"configurable": {"thread_id": "sum"}}
    for text in ("q1", "q2", "q3"):
        out = agent.invoke({"messages": [HumanMessage(text)]}, config)
    contents = [m.content for m in out["messages"]]
    assert summarizer.calls, "the summarizer was never called"
    assert any("SUMMARY: talked about the weather" in str(c) for c in contents)
    assert "q1" not in contents and contents[-1] == "a3"
    assert len(model.calls[-1]) < 6  # the model saw the summary, not the whole history


def test_tools_reach_the_store() -> None:
    model = ScriptedChatModel(replies=[
        tool_call("remember", {"fact": "the sky is blue"}, "c1"),
        tool_call("recall", {}, "c2"),
        AIMessage(content="done"),
    ])
    store = InMemoryStore()
    out = create_agent(model, [remember, recall], store=store).invoke(
        {"messages": [HumanMessage("remember")]})
    tool_results = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_results == ["stored", "the sky is blue"]
    assert store.get(("facts",), "last").value == {"fact": "the sky is blue"}


def test_v3_event_streaming_of_an_agent() -> None:
    """``stream_events(version="v3")`` on a ``create_agent`` graph: values, messages, output."""
    agent = create_agent(_weather_model(), [get_weather])
    run = agent.stream_events({"messages": [HumanMessage("weather in Paris?")]}, version="v3")
    values = list(run.values)
    assert values and _kinds(values[-1]["messages"]) == ["HumanMessage", "AIMessage", "ToolMessage",
                                                          "AIMessage"]
    assert run.output["messages"][-1].content == "It is sunny in Paris."
    assert CALLS == ["Paris"]


async def test_v3_event_streaming_of_an_agent_async() -> None:
    agent = create_agent(_weather_model(), [get_weather])
    run = await agent.astream_events({"messages": [HumanMessage("weather in Paris?")]}, version="v3")
    texts = []
    async for message in run.messages:
        texts.append("".join([token async for token in message.text]))
    assert "It is sunny in Paris." in texts
    out = await run.output()
    assert out["messages"][-1].content == "It is sunny in Paris."
