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


# -- durable: a handler still to run is what a resumed thread runs ----------------------------

from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver  # noqa: E402


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def _durable(saver, handler, **compile_kwargs):
    calls: list[str] = []

    def bad(state: S) -> dict:
        calls.append("bad")
        raise ValueError("boom")

    def ok(state: S) -> dict:
        calls.append("ok")
        return {"log": ["ok"]}

    g = (StateGraph(S).add_node("bad", bad, error_handler=handler).add_node("ok", ok)
         .add_edge(START, "bad").add_edge(START, "ok"))
    return g.compile(checkpointer=saver, **compile_kwargs), calls


def test_a_crashed_handler_runs_again_on_resume_not_the_node(driver, saver) -> None:
    seen: list[str] = []
    fail = [True]

    def handler(state: S, error: NodeError) -> dict:
        seen.append(f"{error.node}:{error.error}")
        if fail[0]:
            raise RuntimeError("handler crashed")
        return {"log": ["recovered"]}

    app, calls = _durable(saver, handler)
    config = cfg()
    with pytest.raises(RuntimeError, match="handler crashed"):
        driver.invoke(app, {"log": []}, config)
    assert sorted(calls) == ["bad", "ok"]
    assert get_state(driver, app, config).next == ("bad",)
    fail[0] = False
    assert sorted(driver.invoke(app, None, config)["log"]) == ["ok", "recovered"]
    assert sorted(calls) == ["bad", "ok"]  # neither node ran again
    assert seen[0] == "bad:boom" and "boom" in seen[1]


def test_a_run_can_pause_before_a_handler(driver, saver) -> None:
    seen: list[str] = []

    def handler(state: S, error: NodeError) -> dict:
        seen.append(error.node)
        return {"log": ["handled"]}

    app, calls = _durable(saver, handler, interrupt_before=["__error_handler__bad"])
    config = cfg()
    driver.invoke(app, {"log": []}, config)
    state = get_state(driver, app, config)
    assert state.next == ("bad",) and seen == []
    assert [t.name for t in state.tasks if t.error is not None] == ["bad"]
    assert sorted(driver.invoke(app, None, config)["log"]) == ["handled", "ok"]
    assert seen == ["bad"] and sorted(calls) == ["bad", "ok"]


def test_an_unknown_handler_breakpoint_is_refused() -> None:
    from stepgraph.errors import GraphDefinitionError

    g = StateGraph(S).add_node("a", lambda s: {}).add_edge(START, "a")
    with pytest.raises(GraphDefinitionError, match="__error_handler__a"):
        g.compile(interrupt_before=["__error_handler__a"])
