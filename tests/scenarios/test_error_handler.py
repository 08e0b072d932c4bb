"""Node error handlers: run instead of the failed node, route with Command, replace its writes."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from stepgraph.errors import NodeError
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, RetryPolicy


class S(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(handler, *, default: bool = False, retry: RetryPolicy | None = None):
    calls: list[str] = []

    def bad(state: S) -> dict:
        calls.append("bad")
        raise ValueError("boom")

    g = StateGraph(S)
    if default:
        g.set_node_defaults(error_handler=handler)
        g.add_node("bad", bad, retry_policy=retry)
    else:
        g.add_node("bad", bad, error_handler=handler, retry_policy=retry)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_node("recover", lambda s: {"log": ["recover"]})
    g.add_edge(START, "bad")
    g.add_edge("bad", "after")
    return g.compile(), calls


def _handler(state: S, error: NodeError) -> Command:
    return Command(update={"log": [f"handled {error.node}: {error.error}"]}, goto="recover")


def test_handler_replaces_failed_node(driver) -> None:
    """The handler's update and goto apply; the failed node's static edge does not fire."""
    app, _ = _graph(_handler)
    assert driver.invoke(app, {"log": []}) == {"log": ["handled bad: boom", "recover"]}


def test_handler_shows_in_updates_stream(driver) -> None:
    """The updates stream names the handler like LangGraph: __error_handler__<node>."""
    app, _ = _graph(_handler)
    assert driver.stream(app, {"log": []}, stream_mode="updates") == [
        {"__error_handler__bad": {"log": ["handled bad: boom"]}},
        {"recover": {"log": ["recover"]}},
    ]


def test_default_handler_and_retries_first(driver) -> None:
    """set_node_defaults(error_handler=...) applies, after the node's retries are spent."""
    retry = RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ValueError)
    app, calls = _graph(_handler, default=True, retry=retry)
    assert driver.invoke(app, {"log": []}) == {"log": ["handled bad: boom", "recover"]}
    assert calls == ["bad", "bad"]


def test_failing_handler_fails_the_run(driver) -> None:
    """A handler that raises fails the run with its own error."""

    def broken(state: S, error: NodeError) -> dict:
        raise RuntimeError("handler broke")

    app, _ = _graph(broken)
    with pytest.raises(RuntimeError, match="handler broke"):
        driver.invoke(app, {"log": []})
