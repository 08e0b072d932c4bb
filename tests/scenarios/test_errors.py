"""Errors at run time: recursion limit, managed step values, node exceptions."""

import operator
import re
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.errors import GraphRecursionError, InvalidUpdateError
from stepgraph.graph import END, START, StateGraph
from stepgraph.managed import IsLastStep, RemainingSteps

MANAGED_BUG = (
    "stepgraph bug: a RemainingSteps/IsLastStep key in the state fails compile with "
    "GraphDefinitionError [SG103] \"Node 'loop' reads unknown channel 'rs'\""
)


class S(TypedDict):
    n: int


def _chain3():
    g = StateGraph(S)
    for name in "abc":
        g.add_node(name, lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile()


def test_recursion_limit_fails_at_three(driver):
    """A chain of 3 nodes hits recursion_limit=3 with GraphRecursionError."""
    with pytest.raises(GraphRecursionError) as info:
        driver.invoke(_chain3(), {"n": 0}, {"recursion_limit": 3})
    assert "Recursion limit of 3 reached" in str(info.value)
    assert isinstance(info.value, RecursionError)


def test_recursion_limit_passes_at_four(driver):
    """The same chain finishes with recursion_limit=4."""
    assert driver.invoke(_chain3(), {"n": 0}, {"recursion_limit": 4}) == {"n": 3}


def test_recursion_limit_default_is_10007(driver):
    """Without recursion_limit an endless loop stops after 10007 steps (LangGraph 1.2 default)."""
    calls = []

    def spin(state: S) -> dict:
        calls.append(1)
        return {"n": state["n"] + 1}

    g = StateGraph(S)
    g.add_node("spin", spin)
    g.add_edge(START, "spin")
    g.add_edge("spin", "spin")
    with pytest.raises(GraphRecursionError, match="Recursion limit of 10007 reached"):
        driver.invoke(g.compile(), {"n": 0})
    assert len(calls) == 10007


def test_recursion_limit_infinite_loop(driver):
    """An endless loop with recursion_limit=25 runs its node 25 times, then raises."""
    calls = []

    def spin(state: S) -> dict:
        calls.append(1)
        return {"n": state["n"] + 1}

    g = StateGraph(S)
    g.add_node("spin", spin)
    g.add_edge(START, "spin")
    g.add_edge("spin", "spin")
    with pytest.raises(GraphRecursionError, match="Recursion limit of 25 reached"):
        driver.invoke(g.compile(), {"n": 0}, {"recursion_limit": 25})
    assert len(calls) == 25


def test_recursion_limit_when_streaming(driver):
    """Streaming yields the steps done before GraphRecursionError is raised."""
    got, err = driver.stream_partial(_chain3(), {"n": 0}, {"recursion_limit": 2}, stream_mode="values")
    assert isinstance(err, GraphRecursionError)
    assert got == [{"n": 0}, {"n": 1}, {"n": 2}]


class Managed(TypedDict):
    n: int
    seen: Annotated[list, operator.add]
    rs: RemainingSteps
    last: IsLastStep


def test_remaining_steps_and_is_last_step(driver):
    """With recursion_limit=5 a loop sees RemainingSteps 4..1 and IsLastStep on the last."""

    def loop(state: Managed) -> dict:
        return {"n": state["n"] + 1, "seen": [(state["rs"], state["last"])]}

    g = StateGraph(Managed)
    g.add_node("loop", loop)
    g.add_edge(START, "loop")
    g.add_conditional_edges("loop", lambda s: END if s["last"] else "loop")
    out = driver.invoke(g.compile(), {"n": 0}, {"recursion_limit": 5})
    assert out == {"n": 4, "seen": [(4, False), (3, False), (2, False), (1, True)]}


def test_remaining_steps_in_router_and_node_input(driver):
    """Managed keys appear in node input but never in the output."""
    inputs = []

    def loop(state: Managed) -> dict:
        inputs.append(dict(state))
        return {"n": state["n"] + 1}

    g = StateGraph(Managed)
    g.add_node("loop", loop)
    g.add_edge(START, "loop")
    g.add_conditional_edges("loop", lambda s: END if s["rs"] <= 2 else "loop")
    out = driver.invoke(g.compile(), {"n": 0}, {"recursion_limit": 5})
    assert out == {"n": 3, "seen": []}
    assert inputs == [
        {"n": 0, "seen": [], "rs": 4, "last": False},
        {"n": 1, "seen": [], "rs": 3, "last": False},
        {"n": 2, "seen": [], "rs": 2, "last": False},
    ]


class Boom(Exception):
    pass


def test_node_exception_propagates_with_note(driver):
    """A node's exception keeps its type and gets a note naming the task."""

    def boom(state: S) -> dict:
        raise KeyError("bad key")

    g = StateGraph(S)
    g.add_node("boom", boom)
    g.add_edge(START, "boom")
    with pytest.raises(KeyError) as info:
        driver.invoke(g.compile(), {"n": 1})
    assert info.value.args == ("bad key",)
    notes = getattr(info.value, "__notes__", [])
    assert len(notes) == 1
    assert re.fullmatch(r"During task with name 'boom' and id '[0-9a-f-]{36}'", notes[0])


def test_async_node_exception_propagates(driver):
    """An async node's custom exception propagates unchanged from ainvoke."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")

    async def boom(state: S) -> dict:
        raise Boom("async failure")

    g = StateGraph(S)
    g.add_node("boom", boom)
    g.add_edge(START, "boom")
    with pytest.raises(Boom, match="async failure") as info:
        driver.invoke(g.compile(), {"n": 1})
    assert any("'boom'" in n for n in info.value.__notes__)


def test_exception_after_successful_steps(driver):
    """A failure in step 2 raises; step 1's updates were already streamed."""

    def second(state: S) -> dict:
        raise Boom(f"n was {state['n']}")

    g = StateGraph(S)
    g.add_node("first", lambda s: {"n": 10})
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    app = g.compile()
    with pytest.raises(Boom, match="n was 10"):
        driver.invoke(app, {"n": 1})
    got, err = driver.stream_partial(app, {"n": 1}, stream_mode="updates")
    assert isinstance(err, Boom)
    assert got == [{"first": {"n": 10}}]


def test_router_exception_propagates(driver):
    """An exception raised by a router propagates as is."""

    def router(state: S) -> str:
        raise Boom("router")

    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", router)
    with pytest.raises(Boom, match="router"):
        driver.invoke(g.compile(), {"n": 0})


def test_concurrent_last_value_error_names_key(driver):
    """InvalidUpdateError for two writes in a step names the key and suggests a reducer."""

    class T(TypedDict):
        status: str

    g = StateGraph(T)
    g.add_node("a", lambda s: {"status": "a"})
    g.add_node("b", lambda s: {"status": "b"})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError) as info:
        driver.invoke(g.compile(), {"status": "x"})
    msg = str(info.value)
    assert "status" in msg
    assert "Can receive only one value per step" in msg


def test_empty_input_raises(driver):
    """Invoking a graph with None (and no checkpoint) raises EmptyInputError."""
    from stepgraph.errors import EmptyInputError

    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    with pytest.raises(EmptyInputError):
        driver.invoke(g.compile(), None)
