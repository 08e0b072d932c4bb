"""The ``tools`` stream mode: each tool call's start, partial outputs, end or error.

Written once for both drivers; needs langchain-core (tools are langchain tools).
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from stepgraph.graph import START, StateGraph  # noqa: E402
from stepgraph.graph.message import add_messages  # noqa: E402
from stepgraph.prebuilt import ToolNode, ToolRuntime  # noqa: E402


class S(TypedDict):
    messages: Annotated[list, add_messages]


def _calls(*calls: tuple[str, dict[str, Any], str]) -> Any:
    def caller(state: S) -> dict:
        return {"messages": [AIMessage("", tool_calls=[
            {"name": n, "args": a, "id": i} for n, a, i in calls
        ])]}

    return caller


def _app(caller: Any, tools: list[Any]) -> Any:
    return (StateGraph(S).add_node("caller", caller).add_node("tools", ToolNode(tools))
            .add_edge(START, "caller").add_edge("caller", "tools").compile())


def _tool_parts(parts: list[Any]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    return [(ns, p) for ns, mode, p in parts if mode == "tools"]


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return f"echo:{text}"


@tool
def chunks(text: str, runtime: ToolRuntime) -> str:
    """Stream the text letter by letter."""
    for letter in text:
        runtime.emit_output_delta(letter)
    return text


def test_a_tool_call_starts_streams_and_finishes(driver) -> None:
    app = _app(_calls(("chunks", {"text": "ab"}, "c1")), [chunks])
    events = _tool_parts(driver.stream(app, {"messages": []}, stream_mode=["tools"], subgraphs=True))
    assert [p["event"] for _, p in events] == [
        "tool-started", "tool-output-delta", "tool-output-delta", "tool-finished",
    ]
    started = events[0][1]
    assert (started["tool_call_id"], started["tool_name"], started["input"]) == (
        "c1", "chunks", {"text": "ab"})
    assert [p["delta"] for _, p in events[1:3]] == ["a", "b"]
    assert events[-1][1]["tool_call_id"] == "c1" and all(ns == () for ns, _ in events)


def test_parallel_calls_keep_their_own_deltas(driver) -> None:
    app = _app(_calls(("chunks", {"text": "xy"}, "a"), ("chunks", {"text": "zw"}, "b")), [chunks])
    events = _tool_parts(driver.stream(app, {"messages": []}, stream_mode=["tools"], subgraphs=True))
    by_call: dict[str, str] = {}
    for _, p in events:
        if p["event"] == "tool-output-delta":
            by_call[p["tool_call_id"]] = by_call.get(p["tool_call_id"], "") + p["delta"]
    assert by_call == {"a": "xy", "b": "zw"}


def test_a_failing_tool_reports_an_error_before_the_run_fails(driver) -> None:
    @tool
    def boom() -> str:
        """Fail."""
        raise ValueError("nope")

    app = _app(_calls(("boom", {}, "c1")), [boom])
    parts, error = driver.stream_partial(app, {"messages": []}, stream_mode="tools")
    assert isinstance(error, ValueError)
    assert [p["event"] for p in parts] == ["tool-started", "tool-error"]
    assert parts[1]["message"] == "nope"


def test_subgraph_tools_carry_the_subgraph_namespace(driver) -> None:
    inner = _app(_calls(("echo", {"text": "x"}, "c1")), [echo])
    outer = StateGraph(S).add_node("sub", inner).add_edge(START, "sub").compile()
    events = _tool_parts(driver.stream(outer, {"messages": []}, stream_mode=["tools"],
                                       subgraphs=True))
    assert [p["event"] for _, p in events] == ["tool-started", "tool-finished"]
    assert all(ns and ns[0].startswith("sub:") for ns, _ in events)
    hidden = driver.stream(outer, {"messages": []}, stream_mode="tools")
    assert hidden == []  # without subgraphs=True a subgraph's tools are not streamed


def test_no_tool_events_unless_asked(driver) -> None:
    app = _app(_calls(("chunks", {"text": "ab"}, "c1")), [chunks])
    parts = driver.stream(app, {"messages": []}, stream_mode=["values", "updates"], subgraphs=True)
    assert all(mode != "tools" for _, mode, _ in parts)
