"""Message graphs: MessagesState with langchain-core messages, an agent loop, dict format."""

import operator
from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from typing_extensions import TypedDict

from stepgraph.graph import END, START, MessagesState, StateGraph
from stepgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

TOOLS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}


def fake_model(state: MessagesState) -> dict:
    """Asks for add(2, 3), then mul(result, 4), then answers with the last tool result."""
    tool_results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    if not tool_results:
        call = {"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}
        return {"messages": [AIMessage(content="", id="ai-1", tool_calls=[call])]}
    if len(tool_results) == 1:
        call = {"name": "mul", "args": {"a": int(tool_results[0].content), "b": 4}, "id": "call-2"}
        return {"messages": [AIMessage(content="", id="ai-2", tool_calls=[call])]}
    return {"messages": [AIMessage(content=f"answer: {tool_results[-1].content}", id="ai-3")]}


def tool_node(state: MessagesState) -> dict:
    """Runs every tool call of the last AI message."""
    out = []
    for call in state["messages"][-1].tool_calls:
        result = TOOLS[call["name"]](**call["args"])
        out.append(ToolMessage(content=str(result), tool_call_id=call["id"], id=f"tool-{call['id']}"))
    return {"messages": out}


def route(state: MessagesState) -> str:
    return "tools" if state["messages"][-1].tool_calls else END


def _agent():
    g = StateGraph(MessagesState)
    g.add_node("model", fake_model)
    g.add_node("tools", tool_node)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", route, ["tools", END])
    g.add_edge("tools", "model")
    return g.compile()


def _call(name, a, b, id):
    return {"name": name, "args": {"a": a, "b": b}, "id": id, "type": "tool_call"}


def test_agent_loop_final_messages(driver):
    """The agent loop alternates model and tools until the model answers."""
    out = driver.invoke(_agent(), {"messages": [{"role": "user", "content": "go", "id": "h-1"}]})
    assert out == {
        "messages": [
            HumanMessage(content="go", id="h-1"),
            AIMessage(content="", id="ai-1", tool_calls=[_call("add", 2, 3, "call-1")]),
            ToolMessage(content="5", tool_call_id="call-1", id="tool-call-1"),
            AIMessage(content="", id="ai-2", tool_calls=[_call("mul", 5, 4, "call-2")]),
            ToolMessage(content="20", tool_call_id="call-2", id="tool-call-2"),
            AIMessage(content="answer: 20", id="ai-3"),
        ]
    }
    assert type(out["messages"][0]) is HumanMessage


def test_agent_loop_updates(driver):
    """The updates stream shows which node produced each message."""
    chunks = driver.stream(_agent(), {"messages": [("user", "go")]}, stream_mode="updates")
    assert [(node, [m.id for m in upd["messages"]]) for c in chunks for node, upd in c.items()] == [
        ("model", ["ai-1"]),
        ("tools", ["tool-call-1"]),
        ("model", ["ai-2"]),
        ("tools", ["tool-call-2"]),
        ("model", ["ai-3"]),
    ]


def test_input_message_likes_are_coerced(driver):
    """Dicts, (role, content) tuples and strings become langchain messages with ids."""
    g = StateGraph(MessagesState)
    g.add_node("echo", lambda s: {"messages": [AIMessage(content=str(len(s["messages"])), id="e")]})
    g.add_edge(START, "echo")
    out = driver.invoke(
        g.compile(),
        {"messages": [{"role": "user", "content": "a"}, ("assistant", "b"), "c"]},
    )
    msgs = out["messages"]
    assert [(type(m).__name__, m.content) for m in msgs] == [
        ("HumanMessage", "a"),
        ("AIMessage", "b"),
        ("HumanMessage", "c"),
        ("AIMessage", "3"),
    ]
    assert all(isinstance(m.id, str) and m.id for m in msgs)


def test_same_id_replaces_message(driver):
    """A message with an existing id replaces it in place."""
    g = StateGraph(MessagesState)
    g.add_node("edit", lambda s: {"messages": [HumanMessage(content="edited", id="h-1")]})
    g.add_edge(START, "edit")
    out = driver.invoke(
        g.compile(),
        {"messages": [HumanMessage(content="orig", id="h-1"), AIMessage(content="x", id="a-1")]},
    )
    assert out == {
        "messages": [HumanMessage(content="edited", id="h-1"), AIMessage(content="x", id="a-1")]
    }


def test_remove_message(driver):
    """RemoveMessage(id) deletes that message."""
    g = StateGraph(MessagesState)
    g.add_node("trim", lambda s: {"messages": [RemoveMessage(id=s["messages"][0].id)]})
    g.add_edge(START, "trim")
    out = driver.invoke(
        g.compile(),
        {"messages": [HumanMessage(content="old", id="1"), HumanMessage(content="new", id="2")]},
    )
    assert out == {"messages": [HumanMessage(content="new", id="2")]}


def test_remove_all_messages(driver):
    """RemoveMessage(REMOVE_ALL_MESSAGES) clears the history before what follows it."""
    g = StateGraph(MessagesState)
    g.add_node(
        "reset",
        lambda s: {
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage(content="fresh", id="f")]
        },
    )
    g.add_edge(START, "reset")
    out = driver.invoke(g.compile(), {"messages": [HumanMessage(content="a", id="1")]})
    assert out == {"messages": [AIMessage(content="fresh", id="f")]}


def test_remove_unknown_id_raises(driver):
    """Removing an id that is not in the history raises ValueError."""
    g = StateGraph(MessagesState)
    g.add_node("bad", lambda s: {"messages": [RemoveMessage(id="nope")]})
    g.add_edge(START, "bad")
    with pytest.raises(ValueError, match="nope"):
        driver.invoke(g.compile(), {"messages": [HumanMessage(content="a", id="1")]})


class ChatState(MessagesState):
    turns: Annotated[int, operator.add]
    summary: str


def test_extended_messages_state(driver):
    """A subclass of MessagesState adds keys next to messages."""

    def respond(state: ChatState) -> dict:
        return {"messages": [AIMessage(content="ok", id="r")], "turns": 1, "summary": "said ok"}

    g = StateGraph(ChatState)
    g.add_node("respond", respond)
    g.add_edge(START, "respond")
    out = driver.invoke(g.compile(), {"messages": [HumanMessage(content="hi", id="h")], "turns": 0})
    assert out == {
        "messages": [HumanMessage(content="hi", id="h"), AIMessage(content="ok", id="r")],
        "turns": 1,
        "summary": "said ok",
    }


def test_messages_stream_mode_yields_node_messages(driver):
    """stream_mode="messages" yields (message, metadata) for messages returned by nodes."""
    chunks = driver.stream(_agent(), {"messages": [("user", "go")]}, stream_mode="messages")
    assert [(m.id, meta["langgraph_node"], meta["langgraph_step"]) for m, meta in chunks] == [
        ("ai-1", "model", 1),
        ("tool-call-1", "tools", 2),
        ("ai-2", "model", 3),
        ("tool-call-2", "tools", 4),
        ("ai-3", "model", 5),
    ]


class DictChat(TypedDict):
    messages: Annotated[list, add_messages(format="dict")]


@pytest.mark.stepgraph_only
def test_dict_format_agent_loop(driver):
    """With add_messages(format="dict") messages stay plain dicts through an agent loop."""

    def model(state: DictChat) -> dict:
        last = state["messages"][-1]
        if last["role"] == "tool":
            return {"messages": [{"role": "assistant", "content": f"= {last['content']}", "id": "a2"}]}
        call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
        return {"messages": [{"role": "assistant", "content": "", "id": "a1", "tool_calls": [call]}]}

    def tools(state: DictChat) -> dict:
        call = state["messages"][-1]["tool_calls"][0]
        result = TOOLS[call["name"]](**call["args"])
        return {"messages": [{"role": "tool", "content": str(result), "tool_call_id": "c1", "id": "t1"}]}

    g = StateGraph(DictChat)
    g.add_node("model", model)
    g.add_node("tools", tools)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", lambda s: "tools" if s["messages"][-1].get("tool_calls") else END)
    g.add_edge("tools", "model")
    out = driver.invoke(g.compile(), {"messages": [{"role": "user", "content": "1+2", "id": "u1"}]})
    call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
    assert out == {
        "messages": [
            {"role": "user", "content": "1+2", "id": "u1"},
            {"role": "assistant", "content": "", "id": "a1", "tool_calls": [call]},
            {"role": "tool", "content": "3", "tool_call_id": "c1", "id": "t1"},
            {"role": "assistant", "content": "= 3", "id": "a2"},
        ]
    }


@pytest.mark.stepgraph_only
def test_dict_format_replace_and_remove(driver):
    """In dict format, same-id messages replace and {"type": "remove"} deletes."""
    g = StateGraph(DictChat)
    g.add_node(
        "edit",
        lambda s: {
            "messages": [
                {"type": "remove", "id": "a1"},
                {"role": "user", "content": "edited", "id": "u1"},
                ("assistant", "new"),
            ]
        },
    )
    g.add_edge(START, "edit")
    inp = {
        "messages": [
            {"role": "user", "content": "hi", "id": "u1"},
            {"role": "assistant", "content": "yo", "id": "a1"},
        ]
    }
    out = driver.invoke(g.compile(), inp)
    msgs = out["messages"]
    assert msgs[0] == {"role": "user", "content": "edited", "id": "u1"}
    assert [(m["role"], m["content"]) for m in msgs] == [("user", "edited"), ("assistant", "new")]
    assert isinstance(msgs[1]["id"], str) and msgs[1]["id"]
