"""``ToolNode`` and ``tools_condition``: execution, errors, injection, ``Command`` outputs."""

import asyncio
import time
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import InjectedToolCallId, tool  # noqa: E402
from prebuilt_fakes import call  # noqa: E402

from stepgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from stepgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from stepgraph.prebuilt import (  # noqa: E402
    InjectedState,
    InjectedStore,
    ToolNode,
    ToolRuntime,
    tools_condition,
)
from stepgraph.prebuilt.tool_node import ToolInvocationError, msg_content_output  # noqa: E402
from stepgraph.store.memory import InMemoryStore  # noqa: E402
from stepgraph.types import Command, Send, interrupt  # noqa: E402


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def boom(x: int) -> str:
    """Always fails."""
    raise ValueError("bad")


@tool
def slow(x: int) -> str:
    """Sleep, then echo."""
    time.sleep(0.3)
    return f"slow {x}"


@tool
async def aslow(x: int) -> str:
    """Sleep asynchronously, then echo."""
    await asyncio.sleep(0.3)
    return f"aslow {x}"


def ai(*calls: dict) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


def graph_of(node: Any, schema: Any = MessagesState, **compile_kw: Any) -> Any:
    builder = StateGraph(schema)
    builder.add_node("tools", node)
    builder.add_edge(START, "tools")
    return builder.compile(**compile_kw)


def test_dict_input_gives_messages_update() -> None:
    """A state dict input returns ``{"messages": [ToolMessage...]}`` in call order."""
    out = ToolNode([add]).invoke({"messages": [ai(call("add", "1", a=1, b=2), call("add", "2", a=3, b=4))]})
    assert [(m.content, m.tool_call_id, m.name) for m in out["messages"]] == [("3", "1", "add"), ("7", "2", "add")]


def test_list_input_gives_list() -> None:
    """A list of messages returns a list of ``ToolMessage``; the last AIMessage is used."""
    msgs = [ai(call("add", "0", a=0, b=0)), HumanMessage("x"), ai(call("add", "1", a=1, b=1))]
    out = ToolNode([add]).invoke(msgs)
    assert [m.content for m in out] == ["2"]


def test_tool_call_list_and_context_inputs() -> None:
    """A bare tool-call list and the ``tool_call_with_context`` payload both run one call each."""
    node = ToolNode([add])
    tc = {**call("add", "9", a=2, b=2), "type": "tool_call"}
    assert node.invoke([tc])["messages"][0].content == "4"
    payload = {"__type": "tool_call_with_context", "tool_call": tc, "state": {"messages": []}}
    assert node.invoke(payload)["messages"][0].tool_call_id == "9"


def test_missing_messages_raise() -> None:
    """No messages, or no AIMessage, is a ``ValueError``."""
    with pytest.raises(ValueError, match="No message found"):
        ToolNode([add]).invoke({"messages": []})
    with pytest.raises(ValueError, match="No AIMessage"):
        ToolNode([add]).invoke([HumanMessage("hi")])


def test_sync_calls_run_in_parallel() -> None:
    """Two slow sync tool calls overlap in time and keep their order."""
    start = time.perf_counter()
    out = graph_of(ToolNode([slow])).invoke({"messages": [ai(call("slow", "1", x=1), call("slow", "2", x=2))]})
    assert time.perf_counter() - start < 0.55
    assert [m.content for m in out["messages"][1:]] == ["slow 1", "slow 2"]


async def test_async_calls_run_concurrently() -> None:
    """Async tool calls are gathered concurrently under ``ainvoke``."""
    start = time.perf_counter()
    calls = [call("aslow", str(i), x=i) for i in range(3)]
    out = await graph_of(ToolNode([aslow])).ainvoke({"messages": [ai(*calls)]})
    assert time.perf_counter() - start < 0.55
    assert [m.content for m in out["messages"][1:]] == ["aslow 0", "aslow 1", "aslow 2"]


def test_unknown_tool_and_bad_args_become_error_messages() -> None:
    """By default an unknown tool and invalid arguments are reported to the model."""
    out = ToolNode([add]).invoke({"messages": [ai(call("nope", "1"), call("add", "2", a="x", b=1))]})
    unknown, invalid = out["messages"]
    assert unknown.content == "Error: nope is not a valid tool, try one of [add]."
    assert unknown.status == invalid.status == "error"
    assert invalid.content.startswith("Error invoking tool 'add' with kwargs {'a': 'x', 'b': 1}")
    assert "a: Input should be a valid integer" in invalid.content


def test_execution_errors_raise_by_default() -> None:
    """By default (as in LangGraph) an error raised by the tool itself propagates."""
    with pytest.raises(ValueError, match="bad"):
        graph_of(ToolNode([boom])).invoke({"messages": [ai(call("boom", "1", x=1))]})


def _typed_handler(e: ValueError) -> str:
    return f"handled {e}"


def _other_handler(e: KeyError) -> str:
    return "never"


@pytest.mark.parametrize(
    ("handler", "content"),
    [
        (True, "Error: ValueError('bad')\n Please fix your mistakes."),
        ("custom text", "custom text"),
        (ValueError, "Error: ValueError('bad')\n Please fix your mistakes."),
        ((TypeError, ValueError), "Error: ValueError('bad')\n Please fix your mistakes."),
        (_typed_handler, "handled bad"),
        (False, None),
        (TypeError, None),
        (_other_handler, None),
    ],
)
async def test_handle_tool_errors_variants(handler: Any, content: str | None) -> None:
    """Each ``handle_tool_errors`` form catches what it names (sync and async)."""
    node = ToolNode([boom], handle_tool_errors=handler)
    state = {"messages": [ai(call("boom", "1", x=1))]}
    if content is None:
        with pytest.raises(ValueError):
            node.invoke(state)
        with pytest.raises(ValueError):
            await node.ainvoke(state)
        return
    for out in (node.invoke(state), await node.ainvoke(state)):
        assert (out["messages"][0].content, out["messages"][0].status) == (content, "error")


def test_invocation_error_type() -> None:
    """Invalid arguments surface as ``ToolInvocationError`` to a typed handler."""
    seen: list[Exception] = []

    def handler(e: ToolInvocationError) -> str:
        seen.append(e)
        return "fix it"

    out = ToolNode([add], handle_tool_errors=handler).invoke({"messages": [ai(call("add", "1", a="x", b=1))]})
    assert out["messages"][0].content == "fix it" and seen[0].tool_name == "add"


def test_interrupt_inside_tool_is_never_caught() -> None:
    """``interrupt()`` in a tool pauses the graph even with ``handle_tool_errors=True``."""

    @tool
    def ask(q: str) -> str:
        """Ask a human."""
        return f"got {interrupt(q)}"

    graph = graph_of(ToolNode([ask], handle_tool_errors=True), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "1"}}
    out = graph.invoke({"messages": [ai(call("ask", "1", q="ok?"))]}, cfg)
    assert out["__interrupt__"][0].value == "ok?"
    out = graph.invoke(Command(resume="yes"), cfg)
    assert out["messages"][-1].content == "got yes"


class WhoState(MessagesState):
    who: str


@tool
def set_who(who: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Record who."""
    return Command(update={"messages": [ToolMessage("ok", tool_call_id=tool_call_id)], "who": who})


def test_command_update_reaches_state() -> None:
    """A tool's ``Command(update=...)`` updates other keys; its ToolMessage gets the tool name."""
    out = graph_of(ToolNode([set_who, add]), WhoState).invoke(
        {"messages": [ai(call("set_who", "1", who="bob"), call("add", "2", a=1, b=1))]}
    )
    assert out["who"] == "bob"
    assert [(m.content, m.name) for m in out["messages"][1:]] == [("ok", "set_who"), ("2", "add")]


def test_command_goto_routes() -> None:
    """A tool's ``Command(goto=...)`` picks the next node."""

    @tool
    def jump(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Jump to the end node."""
        return Command(update={"messages": [ToolMessage("j", tool_call_id=tool_call_id)]}, goto="last")

    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([jump]))
    builder.add_node("last", lambda s: {"messages": [AIMessage("end", id="e")]})
    builder.add_edge(START, "tools")
    out = builder.compile().invoke({"messages": [ai(call("jump", "1"))]})
    assert [m.content for m in out["messages"][1:]] == ["j", "end"]


def test_command_without_reply_is_rejected() -> None:
    """A ``Command`` to the current graph must carry the ToolMessage for its call."""

    @tool
    def silent() -> Command:
        """No reply."""
        return Command(update={"messages": []})

    with pytest.raises(ValueError, match="Expected to have a matching ToolMessage"):
        ToolNode([silent], handle_tool_errors=False).invoke({"messages": [ai(call("silent", "1"))]})
    with pytest.raises(ValueError, match="dict in Command.update only when using dict"):
        ToolNode([set_who], handle_tool_errors=False).invoke([ai(call("set_who", "1", who="x"))])


def test_parent_command_sends_are_merged() -> None:
    """Parent-graph ``Command``s made of ``Send``s from several calls merge into one."""

    @tool
    def hand_off(to: str) -> Command:
        """Send to a parent node."""
        return Command(graph=Command.PARENT, goto=[Send(to, {"x": 1})])

    out = ToolNode([hand_off]).invoke({"messages": [ai(call("hand_off", "1", to="a"), call("hand_off", "2", to="b"))]})
    assert len(out) == 1 and out[0].graph == Command.PARENT
    assert [s.node for s in out[0].goto] == ["a", "b"]


@tool
def peek(q: str, state: Annotated[dict, InjectedState], msgs: Annotated[list, InjectedState("messages")]) -> str:
    """Look at the state."""
    return f"{q}:{len(state['messages'])}:{len(msgs)}:{state.get('who')}"


def test_injected_state_is_hidden_and_filled() -> None:
    """``InjectedState`` arguments are not in the model schema and get the state / one key."""
    assert list(peek.tool_call_schema.model_json_schema()["properties"]) == ["q"]
    state = {"messages": [HumanMessage("a"), ai(call("peek", "1", q="x", state={"forged": 1}))], "who": "me"}
    assert ToolNode([peek]).invoke(state)["messages"][0].content == "x:2:2:me"


def test_injected_state_from_list_and_context() -> None:
    """A list input is the ``messages``; a Send payload's state is its ``state``."""
    assert ToolNode([peek]).invoke([ai(call("peek", "1", q="l"))])[0].content == "l:1:1:None"
    tc = {**call("peek", "2", q="c"), "type": "tool_call"}
    payload = {"__type": "tool_call_with_context", "tool_call": tc, "state": {"messages": [1, 2, 3], "who": "w"}}
    assert ToolNode([peek]).invoke(payload)["messages"][0].content == "c:3:3:w"


@tool
def remember(key: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Store a key."""
    store.put(("mem",), key, {"v": 1})
    return "saved"


def test_injected_store() -> None:
    """``InjectedStore`` gets the graph's store; without one the node raises."""
    store = InMemoryStore()
    out = graph_of(ToolNode([remember]), store=store).invoke({"messages": [ai(call("remember", "1", key="k"))]})
    assert out["messages"][-1].content == "saved" and store.get(("mem",), "k").value == {"v": 1}
    with pytest.raises(ValueError, match="compile your graph with a store"):
        graph_of(ToolNode([remember])).invoke({"messages": [ai(call("remember", "1", key="k"))]})


@dataclass
class Ctx:
    user: str


@tool
def whoami(runtime: ToolRuntime[Ctx]) -> str:
    """Report the runtime."""
    msgs = runtime.state["messages"]
    return f"{runtime.context.user}:{runtime.tool_call_id}:{len(msgs)}:{runtime.store is not None}"


async def test_tool_runtime_injection() -> None:
    """``ToolRuntime`` carries context, store, tool call id and state (sync and async)."""
    assert list(whoami.tool_call_schema.model_json_schema().get("properties", {})) == []
    builder = StateGraph(MessagesState, context_schema=Ctx)
    builder.add_node("tools", ToolNode([whoami]))
    builder.add_edge(START, "tools")
    graph = builder.compile(store=InMemoryStore())
    state = {"messages": [ai(call("whoami", "7"))]}
    assert graph.invoke(state, context=Ctx("ann"))["messages"][-1].content == "ann:7:1:True"
    assert (await graph.ainvoke(state, context=Ctx("bo")))["messages"][-1].content == "bo:7:1:True"


def test_plain_functions_custom_key_and_object_state() -> None:
    """Plain functions become tools; ``messages_key`` and attribute states are honoured."""

    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    node = ToolNode([mul], messages_key="chat")
    assert node.tools_by_name["mul"].name == "mul"
    assert node.invoke({"chat": [ai(call("mul", "1", a=2, b=3))]})["chat"][0].content == "6"

    @dataclass
    class Obj:
        chat: list

    assert node.invoke(Obj([ai(call("mul", "1", a=2, b=5))]))["chat"][0].content == "10"


def test_content_output_forms() -> None:
    """Strings and content blocks stay; other values become JSON (``str`` if not JSON-able)."""
    assert msg_content_output("x") == "x"
    assert msg_content_output([{"type": "text", "text": "t"}]) == [{"type": "text", "text": "t"}]
    assert msg_content_output({"a": "é"}) == '{"a": "é"}'
    assert msg_content_output({1, 2}) in ("{1, 2}", "{2, 1}")


async def test_wrap_tool_call_interceptors() -> None:
    """``wrap_tool_call``/``awrap_tool_call`` can rewrite a request or short-circuit it."""

    def double(request: Any, execute: Any) -> Any:
        tc = request.tool_call
        return execute(request.override(tool_call={**tc, "args": {k: v * 2 for k, v in tc["args"].items()}}))

    async def cached(request: Any, execute: Any) -> Any:
        return ToolMessage("cached", tool_call_id=request.tool_call["id"], name="add")

    state = {"messages": [ai(call("add", "1", a=1, b=2))]}
    assert ToolNode([add], wrap_tool_call=double).invoke(state)["messages"][0].content == "6"
    assert (await ToolNode([add], wrap_tool_call=double).ainvoke(state))["messages"][0].content == "6"
    out = await ToolNode([add], awrap_tool_call=cached).ainvoke(state)
    assert out["messages"][0].content == "cached"


def test_tools_condition_routes() -> None:
    """``tools_condition`` returns ``"tools"`` for tool calls, else ``END``."""
    with_calls = ai(call("add", "1", a=1, b=1))
    assert tools_condition({"messages": [with_calls]}) == "tools"
    assert tools_condition([HumanMessage("x"), with_calls]) == "tools"
    assert tools_condition({"messages": [AIMessage("done")]}) == END
    assert tools_condition({"chat": [with_calls]}, messages_key="chat") == "tools"
    with pytest.raises(ValueError, match="No messages found"):
        tools_condition({"messages": []})


def test_tools_condition_reads_dict_messages() -> None:
    """stepgraph extension: a plain-dict assistant message with ``tool_calls`` routes to tools."""
    msg = {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "add", "args": {}}]}
    assert tools_condition({"messages": [msg]}) == "tools"
    assert tools_condition({"messages": [{"role": "assistant", "content": "hi"}]}) == END
    out = ToolNode([add]).invoke({"messages": [{**msg, "tool_calls": [call("add", "1", a=1, b=1)]}]})
    assert out["messages"][0].content == "2"


def test_tools_condition_in_a_loop() -> None:
    """The classic model/tools loop built by hand with ``ToolNode`` and ``tools_condition``."""
    replies = iter([ai(call("add", "1", a=2, b=2)), AIMessage("four", id="f")])
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda s: {"messages": [next(replies)]})
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    out = builder.compile().invoke({"messages": [HumanMessage("2+2?")]})
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert out["messages"][2].content == "4"
