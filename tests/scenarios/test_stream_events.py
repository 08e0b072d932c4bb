"""``astream_events`` / ``stream_events`` (v2): graph, node and chat-model events in order."""

from __future__ import annotations

import asyncio
from typing import TypedDict

import pytest

from stepgraph.graph import START, MessagesState, StateGraph


class S(TypedDict):
    x: int


def _chain():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1})
    g.add_node("b", lambda s: {"x": s["x"] * 2})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile()


def _collect(app, inp, driver: str, **kwargs) -> list[dict]:
    if driver == "sync":
        return list(app.stream_events(inp, version="v2", **kwargs))

    async def run() -> list[dict]:
        return [e async for e in app.astream_events(inp, version="v2", **kwargs)]

    return asyncio.run(run())


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_chain_events_match_langgraph_order(driver: str) -> None:
    """A two-node chain yields LangGraph's event sequence with inputs, chunks and outputs."""
    events = _collect(_chain(), {"x": 1}, driver)
    assert [(e["event"], e["name"]) for e in events] == [
        ("on_chain_start", "LangGraph"),
        ("on_chain_start", "a"),
        ("on_chain_stream", "a"),
        ("on_chain_end", "a"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_start", "b"),
        ("on_chain_stream", "b"),
        ("on_chain_end", "b"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_end", "LangGraph"),
    ]
    assert events[0]["data"] == {"input": {"x": 1}}
    assert events[3]["data"] == {"output": {"x": 2}, "input": {"x": 1}}
    assert events[3]["tags"] == ["graph:step:1"] and events[3]["metadata"]["langgraph_node"] == "a"
    assert events[3]["parent_ids"] == [events[0]["run_id"]]
    assert events[4]["data"] == {"chunk": {"a": {"x": 2}}}
    assert events[-1]["data"] == {"output": {"x": 4}}


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_filters(driver: str) -> None:
    """include_names keeps only the named runs' events."""
    events = _collect(_chain(), {"x": 1}, driver, include_names=["b"])
    assert [e["event"] for e in events] == ["on_chain_start", "on_chain_stream", "on_chain_end"]


def test_chat_model_events() -> None:
    """A chat model called in a node reports start, one stream event per token, and end."""
    pytest.importorskip("langchain_core")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello world", id="m1")]))
    g = StateGraph(MessagesState)
    g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_edge(START, "chat")
    events = _collect(g.compile(), {"messages": [("user", "hi")]}, "async")
    kinds = [e["event"] for e in events]
    assert kinds[:3] == ["on_chain_start", "on_chain_start", "on_chat_model_start"]
    streamed = "".join(e["data"]["chunk"].content for e in events if e["event"] == "on_chat_model_stream")
    assert streamed == "hello world"
    end = next(e for e in events if e["event"] == "on_chat_model_end")
    assert end["data"]["output"].content == "hello world"
    assert len(end["parent_ids"]) == 2
    assert kinds[-2:] == ["on_chain_stream", "on_chain_end"]


def test_unsupported_version_raises() -> None:
    """An unknown version is refused (v3 returns a run stream: tests/unit/stream/)."""
    with pytest.raises(NotImplementedError):
        list(_chain().stream_events({"x": 1}, version="v4"))


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_events_of_a_checkpointed_workflow(driver: str) -> None:
    """With a checkpointer the run's checkpoint records are not node events."""
    from stepgraph.checkpoint.memory import InMemorySaver
    from stepgraph.func import entrypoint

    @entrypoint(checkpointer=InMemorySaver())
    def wf(x: int) -> int:
        return x + 1

    events = _collect(wf, 1, driver, config={"configurable": {"thread_id": "1"}})
    assert [(e["event"], e["name"]) for e in events] == [
        ("on_chain_start", "LangGraph"),
        ("on_chain_start", "wf"),
        ("on_chain_stream", "wf"),
        ("on_chain_end", "wf"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_end", "LangGraph"),
    ]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_task_call_events_and_failed_calls(driver: str) -> None:
    """``@task`` calls get start/stream/end events of their own; a call that fails has only
    its start (LangGraph's events have no error kind); the graph's chunk of a call's
    result is seen at the caller's next pause."""
    from stepgraph.func import entrypoint, task

    @task
    def ok(x: int) -> int:
        return x * 2

    @task
    def boom(x: int) -> int:
        raise ValueError("no")

    @entrypoint()
    def wf(x: int) -> str:
        ok(x).result()
        try:
            boom(x).result()
        except ValueError:
            pass
        ok(x).result()
        return "done"

    events = _collect(wf, 1, driver)
    assert [(e["event"], e["name"]) for e in events] == [
        ("on_chain_start", "LangGraph"),
        ("on_chain_start", "wf"),
        ("on_chain_start", "ok"),
        ("on_chain_stream", "ok"),
        ("on_chain_end", "ok"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_start", "boom"),
        ("on_chain_start", "ok"),
        ("on_chain_stream", "ok"),
        ("on_chain_end", "ok"),
        ("on_chain_stream", "wf"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_end", "wf"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_end", "LangGraph"),
    ]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_task_call_event_details(driver: str) -> None:
    """A call's events are children of its caller's run, show its arguments by name and
    its return value; the graph's and nodes' events carry the run's metadata; an
    entrypoint node streams its return value."""
    from stepgraph.func import entrypoint, task

    @task
    def ok(number: int, scale: int = 2) -> int:
        return number * scale

    @entrypoint()
    def wf(x: int) -> str:
        ok(x, scale=3).result()
        return "done"

    events = _collect(wf, 1, driver, config={"configurable": {"thread_id": "t9"}})
    root, node = events[0], events[1]
    assert root["metadata"] == {"thread_id": "t9", "ls_integration": "langgraph"}
    assert node["metadata"]["thread_id"] == "t9" and node["tags"] == ["graph:step:0"]
    calls = [e for e in events if e["name"] == "ok"]
    assert [e["event"] for e in calls] == ["on_chain_start", "on_chain_stream", "on_chain_end"]
    start, stream, end = calls
    assert start["data"] == {"input": {"number": 1, "scale": 3}}
    assert stream["data"] == {"chunk": 3}
    assert end["data"] == {"output": 3, "input": {"number": 1, "scale": 3}}
    assert start["parent_ids"] == [root["run_id"], node["run_id"]]
    assert start["tags"] == ["seq:step:1"]
    meta = start["metadata"]
    assert meta["langgraph_node"] == "ok" and meta["langgraph_triggers"] == ("__pregel_push",)
    assert meta["langgraph_path"][:2] == ("__pregel_push", ("__pregel_pull", "wf"))
    node_stream = next(e for e in events if e["name"] == "wf" and e["event"] == "on_chain_stream")
    assert node_stream["data"] == {"chunk": "done"}
