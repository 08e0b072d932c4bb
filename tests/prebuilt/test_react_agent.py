"""``create_react_agent`` end to end with a scripted chat model."""

from dataclasses import dataclass
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from prebuilt_fakes import ScriptedModel, call, summary  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from stepgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from stepgraph.graph import MessagesState  # noqa: E402
from stepgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402
from stepgraph.managed import RemainingSteps  # noqa: E402
from stepgraph.prebuilt import InjectedState, ToolNode, ToolRuntime, create_react_agent  # noqa: E402
from stepgraph.prebuilt.chat_agent_executor import NEED_MORE_STEPS  # noqa: E402

HI = {"messages": [("user", "hi")]}


@dataclass
class Ctx:
    big: bool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool(return_direct=True)
def final(x: int) -> str:
    """Answer directly."""
    return f"final {x}"


def one_call_model(**kw: Any) -> ScriptedModel:
    return ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]], **kw)


def test_agent_loop_sync() -> None:
    """Model calls a tool, sees the result, answers; tools were bound with ``bind_tools``."""
    model = one_call_model()
    out = create_react_agent(model, [add, shout]).invoke(HI)
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert out["messages"][-1].content == "hi-hi-3"
    assert model.bound_tools == ["add", "shout"]
    assert sorted(out) == ["messages"]


async def test_agent_loop_async_parallel_calls() -> None:
    """Under ``ainvoke`` parallel tool calls all get answered, in call order."""
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2), call("shout", "c2", text="yo")]])
    out = await create_react_agent(model, [add, shout]).ainvoke(HI)
    assert [m.content for m in out["messages"][2:]] == ["3", "YO", "hi-hi-3-YO"]


async def test_stream_updates() -> None:
    """``stream_mode="updates"``: agent, one ``tools`` update per call (v2 sends), agent."""
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2), call("shout", "c2", text="yo")]])
    agent = create_react_agent(model, [add, shout])
    nodes = [n for chunk in agent.stream(HI, stream_mode="updates") for n in chunk]
    assert nodes == ["agent", "tools", "tools", "agent"]
    model.index = 0
    anodes = [n async for chunk in agent.astream(HI, stream_mode="updates") for n in chunk]
    assert anodes == nodes


def test_stream_messages_from_the_model() -> None:
    """``stream_mode="messages"`` yields the model's and the tools' messages with their node."""
    agent = create_react_agent(one_call_model(), [add])
    seen = [
        (type(m).__name__, md["langgraph_node"])
        for m, md in agent.stream(HI, stream_mode="messages")
    ]
    assert seen == [("AIMessage", "agent"), ("ToolMessage", "tools"), ("AIMessage", "agent")]


def test_interrupt_before_tools_then_resume() -> None:
    """With a checkpointer, ``interrupt_before=["tools"]`` pauses; ``invoke(None)`` resumes."""
    agent = create_react_agent(
        one_call_model(), [add], checkpointer=InMemorySaver(), interrupt_before=["tools"]
    )
    cfg = {"configurable": {"thread_id": "t1"}}
    out = agent.invoke(HI, cfg)
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert agent.get_state(cfg).next == ("tools",)
    out = agent.invoke(None, cfg)
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert agent.get_state(cfg).next == ()


async def test_interrupt_before_tools_async_with_edit() -> None:
    """Async pause before tools; editing the pending call through ``update_state`` is honoured."""
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]])
    agent = create_react_agent(
        model, [add], checkpointer=InMemorySaver(), interrupt_before=["tools"]
    )
    cfg = {"configurable": {"thread_id": "t2"}}
    await agent.ainvoke(HI, cfg)
    state = await agent.aget_state(cfg)
    assert state.next == ("tools",)
    out = await agent.ainvoke(None, cfg)
    assert out["messages"][2].content == "3"


def test_interrupt_after_agent_and_memory() -> None:
    """``interrupt_after=["agent"]`` stops after each model turn; a thread keeps its history."""
    agent = create_react_agent(
        ScriptedModel(), [add], checkpointer=InMemorySaver(), interrupt_after=["agent"]
    )
    cfg = {"configurable": {"thread_id": "t3"}}
    agent.invoke(HI, cfg)
    assert agent.get_state(cfg).next == ()  # no tool calls: the run ended at the interrupt
    out = agent.invoke({"messages": [("user", "again")]}, cfg)
    assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]


@pytest.mark.parametrize(("limit", "tools_run"), [(4, 1), (6, 2)])
def test_remaining_steps_exhaustion(limit: int, tools_run: int) -> None:
    """With too few steps left the agent says it needs more steps instead of recursing."""
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]], loop=True)
    out = create_react_agent(model, [add]).invoke(HI, {"recursion_limit": limit})
    assert out["messages"][-1].content == NEED_MORE_STEPS
    assert out["messages"][-1].tool_calls == []
    assert sum(m.type == "tool" for m in out["messages"]) == tools_run


def test_return_direct_ends_after_tool() -> None:
    """A ``return_direct`` tool ends the run with its ToolMessage."""
    model = ScriptedModel(turns=[[call("final", "c1", x=1)]])
    out = create_react_agent(model, [final, add]).invoke(HI)
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool"]
    assert out["messages"][-1].content == "final 1"


class Weather(BaseModel):
    temp: int


async def test_structured_response() -> None:
    """``response_format`` adds ``structured_response`` from ``with_structured_output``."""
    model = one_call_model(structured=Weather(temp=70))
    agent = create_react_agent(model, [add], response_format=Weather)
    assert agent.invoke(HI)["structured_response"] == Weather(temp=70)
    assert summary(model.received[-1])[-1] == ("ai", "hi-hi-3", None, ())
    model.index = 0
    agent = create_react_agent(model, [add], response_format=("be terse", Weather))
    assert (await agent.ainvoke(HI))["structured_response"].temp == 70
    assert summary(model.received[-1])[0] == ("system", "be terse")


async def _async_prompt(state: dict) -> list:
    return [SystemMessage("async"), *state["messages"]]


@pytest.mark.parametrize(
    ("prompt", "first"),
    [
        ("plain", "plain"),
        (SystemMessage("sysmsg"), "sysmsg"),
        (lambda s: [SystemMessage("fn"), *s["messages"]], "fn"),
        (
            ChatPromptTemplate.from_messages([("system", "tmpl"), ("placeholder", "{messages}")]),
            "tmpl",
        ),
        (_async_prompt, "async"),
    ],
)
async def test_prompt_variants(prompt: Any, first: str) -> None:
    """str / SystemMessage / callable / Runnable / async prompts shape the model input only."""
    model = ScriptedModel()
    out = await create_react_agent(model, [add], prompt=prompt).ainvoke(HI)
    assert summary(model.received[0]) == [("system", first), ("human", "hi")]
    assert [m.type for m in out["messages"]] == ["human", "ai"]


def test_prompt_receives_runtime_and_config() -> None:
    """A prompt function may take ``config`` and ``runtime`` (context) like a node."""

    def prompt(state: dict, config: RunnableConfig, runtime: Any) -> list:
        tag = config["configurable"]["tag"]
        return [SystemMessage(f"{tag}/{runtime.context.big}"), *state["messages"]]

    model = ScriptedModel()
    agent = create_react_agent(model, [add], prompt=prompt, context_schema=Ctx)
    agent.invoke(HI, {"configurable": {"tag": "t"}}, context=Ctx(big=True))
    assert summary(model.received[0])[0] == ("system", "t/True")


def test_invalid_prompt_and_arguments() -> None:
    """Bad prompt, version, schema or keyword arguments are rejected up front."""
    with pytest.raises(ValueError, match="unexpected type for `prompt`"):
        create_react_agent(ScriptedModel(), [add], prompt=42)
    with pytest.raises(ValueError, match="Invalid version"):
        create_react_agent(ScriptedModel(), [add], version="v3")
    with pytest.raises(ValueError, match="remaining_steps"):
        create_react_agent(ScriptedModel(), [add], state_schema=MessagesState)
    with pytest.raises(TypeError, match="unexpected keyword"):
        create_react_agent(ScriptedModel(), [add], bogus=1)


def test_pre_and_post_model_hooks() -> None:
    """The pre hook's ``llm_input_messages`` feed the model only; the post hook runs after it."""
    seen: list[int] = []

    def pre(state: dict) -> dict:
        return {"llm_input_messages": [HumanMessage("trimmed")]}

    def post(state: dict) -> dict:
        seen.append(len(state["messages"]))
        return {}

    model = one_call_model()
    agent = create_react_agent(model, [add], pre_model_hook=pre, post_model_hook=post)
    out = agent.invoke(HI)
    assert [m.content for m in model.received[0]] == ["trimmed"]
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert seen == [2, 4]


def test_pre_model_hook_can_rewrite_messages() -> None:
    """A pre hook returning ``messages`` with ``REMOVE_ALL_MESSAGES`` replaces the history."""

    def pre(state: dict) -> dict:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("only", id="o")]}

    out = create_react_agent(ScriptedModel(), [add], pre_model_hook=pre).invoke(HI)
    assert [m.content for m in out["messages"]] == ["only", "only"]


def test_name_version_v1_and_no_tools() -> None:
    """``name`` tags replies; v1 runs all calls in one ``tools`` task; no tools = one node."""
    agent = create_react_agent(ScriptedModel(), [add], name="bot")
    assert agent.name == "bot" and agent.invoke(HI)["messages"][-1].name == "bot"
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2), call("add", "c2", a=2, b=2)]])
    chunks = list(create_react_agent(model, [add], version="v1").stream(HI, stream_mode="updates"))
    assert [len(c["tools"]["messages"]) for c in chunks if "tools" in c] == [2]
    model = ScriptedModel()
    agent = create_react_agent(model, [])
    assert set(agent.get_graph().nodes) == {"__start__", "agent", "__end__"}
    assert agent.invoke(HI)["messages"][-1].content == "hi" and model.bound_tools == []


class TeamState(MessagesState):
    remaining_steps: RemainingSteps
    team: str


@tool
def team_of(q: str, team: Annotated[str, InjectedState("team")], runtime: ToolRuntime) -> str:
    """Tell the team."""
    return f"{q}:{team}:{len(runtime.state['messages'])}"


def test_custom_state_schema_and_tool_node() -> None:
    """A custom state schema reaches injected tools, with the full history sent per call."""
    model = ScriptedModel(turns=[[call("team_of", "c1", q="x")]])
    agent = create_react_agent(model, ToolNode([team_of]), state_schema=TeamState)
    out = agent.invoke({"messages": [("user", "hi")], "team": "red"})
    assert out["messages"][2].content == "x:red:2" and out["team"] == "red"


def test_dynamic_model_selection() -> None:
    """A ``(state, runtime) -> model`` callable picks the model per call from the context."""
    small, big = one_call_model(), ScriptedModel()

    def pick(state: dict, runtime: Any) -> Any:
        return (big if runtime.context.big else small).bind_tools([add])

    agent = create_react_agent(pick, [add], context_schema=Ctx)
    assert [m.type for m in agent.invoke(HI, context=Ctx(big=False))["messages"]][-2:] == [
        "tool",
        "ai",
    ]
    assert agent.invoke(HI, context=Ctx(big=True))["messages"][-1].content == "hi"


async def test_async_dynamic_model_needs_async_run() -> None:
    """An async model selector works with ``ainvoke`` and is refused by ``invoke``."""
    model = one_call_model()

    async def pick(state: dict, runtime: Any) -> Any:
        return model.bind_tools([add])

    agent = create_react_agent(pick, [add])
    assert (await agent.ainvoke(HI))["messages"][-1].content == "hi-hi-3"
    with pytest.raises(RuntimeError, match="Async model callable"):
        agent.invoke(HI)


def test_prebound_model() -> None:
    """A model already bound to the same tools is not rebound; a different set is an error."""
    model = ScriptedModel()
    create_react_agent(model.bind_tools([add]), [add]).invoke(HI)
    with pytest.raises(ValueError, match="Number of tools"):
        create_react_agent(model.bind_tools([add]), [add, shout])
    with pytest.raises(ValueError, match="Missing tools"):
        create_react_agent(model.bind_tools([add]), [shout])


def test_unanswered_tool_call_in_history_is_rejected() -> None:
    """History with a tool call lacking its ToolMessage raises ``INVALID_CHAT_HISTORY``."""
    bad = {"messages": [("user", "hi"), AIMessage("", tool_calls=[call("add", "x", a=1, b=1)])]}
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
        create_react_agent(ScriptedModel(), [add]).invoke(bad)


def test_chat_history_check_lists_unanswered_calls_in_order() -> None:
    """A call counts as answered by a ToolMessage anywhere in the history; the error lists the
    first three unanswered calls in history order, AIMessage subclasses (chunks) included."""
    from langchain_core.messages import AIMessageChunk, ToolMessage

    from stepgraph.prebuilt._agent import _validate_chat_history

    c = [call("add", f"c{i}", a=i, b=1) for i in range(6)]
    history: list[Any] = [
        HumanMessage("hi"),
        ToolMessage("early", tool_call_id="c4"),
        AIMessage("", tool_calls=[c[0], c[1]]),
        ToolMessage("1", tool_call_id="c0"),
        AIMessageChunk(content="", tool_calls=[c[2]]),
        AIMessage("", tool_calls=[c[3], c[4], c[5]]),
    ]
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY") as err:
        _validate_chat_history(history)
    listed = str(err.value).split("first few of those tool calls: ")[1].split(".\n")[0]
    assert [f"'id': 'c{i}'" in listed for i in range(6)] == [False, True, True, True, False, False]
    assert listed.index("'c1'") < listed.index("'c2'") < listed.index("'c3'")
    answered = [ToolMessage("x", tool_call_id=f"c{i}") for i in (1, 2, 3, 5)]
    _validate_chat_history(history + answered)  # all answered: no error
