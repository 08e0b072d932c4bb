"""A router sees the state as at the end of its node's step (LangGraph's fresh read): its
node's writes applied, and an ephemeral value written the step before already cleared."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.errors import InvalidUpdateError
from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Command


class S(TypedDict, total=False):
    jump: Annotated[str | None, EphemeralValue]
    log: list[str]


def test_an_ephemeral_jump_from_the_previous_step_does_not_route_again() -> None:
    seen: list[object] = []

    def first(state: S) -> S:
        return {"jump": "again", "log": ["first"]}

    def second(state: S) -> S:
        return {"log": [*state["log"], "second"]}

    def route(state: S) -> str:
        seen.append(state.get("jump"))
        return "second" if state.get("jump") == "again" and len(seen) == 1 else END

    builder = StateGraph(S)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_conditional_edges("first", route, ["second", END])
    builder.add_conditional_edges("second", route, ["second", END])
    out = builder.compile().invoke({})
    assert out["log"] == ["first", "second"]
    assert seen == ["again", None]  # second's router: the jump written by first is gone


class Plain(TypedDict, total=False):
    a: int
    b: int
    c: int


def _routed(node_out: dict, given: dict) -> list[object]:
    seen: list[object] = []

    def node(state: Plain) -> dict:
        return node_out

    def route(state: Plain) -> str:
        seen.append(list(state.items()))
        return END

    builder = StateGraph(Plain)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_conditional_edges("node", route, [END])
    builder.compile().invoke(given)
    return seen


def test_a_router_sees_its_nodes_plain_writes_in_key_order() -> None:
    # written keys that had a value keep their place; one that had none is read in order
    assert _routed({"b": 20}, {"a": 1, "b": 2}) == [[("a", 1), ("b", 20)]]
    assert _routed({"c": 30, "a": 10}, {"b": 2}) == [[("a", 10), ("b", 2), ("c", 30)]]
    assert _routed({}, {"c": 3}) == [[("c", 3)]]


def test_a_router_read_of_two_writes_to_one_plain_key_fails() -> None:
    def node(state: Plain) -> list:
        return [Command(update={"a": 1}), Command(update={"a": 2})]

    def route(state: Plain) -> str:
        return END

    builder = StateGraph(Plain)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_conditional_edges("node", route, [END])
    with pytest.raises(InvalidUpdateError):
        builder.compile().invoke({"a": 0})


class Mixed(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    last: str


def test_a_router_sees_reducer_and_plain_writes_together() -> None:
    seen: list[object] = []

    def node(state: Mixed) -> Mixed:
        return {"log": ["x"], "last": "x"}

    def route(state: Mixed) -> str:
        seen.append(dict(state))
        return END

    builder = StateGraph(Mixed)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_conditional_edges("node", route, [END])
    out = builder.compile().invoke({"log": ["a"]})
    assert seen == [{"log": ["a", "x"], "last": "x"}]
    assert out == {"log": ["a", "x"], "last": "x"}
