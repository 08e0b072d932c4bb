"""State updates beyond plain dicts: returned state objects, Overwrite, validation, batch."""

import operator
from dataclasses import dataclass, field
from typing import Annotated

import pytest
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.types import Overwrite


class PState(BaseModel):
    x: int
    items: Annotated[list, operator.add] = []


@dataclass
class DState:
    x: int
    items: Annotated[list, operator.add] = field(default_factory=list)


class TState(TypedDict):
    items: Annotated[list, operator.add]


def _one(schema, node):
    g = StateGraph(schema)
    g.add_node("a", node)
    g.add_edge(START, "a")
    return g.compile()


def test_pydantic_input_is_validated(driver):
    """Input that fails the pydantic model raises pydantic's ValidationError."""
    app = _one(PState, lambda s: {"x": s.x + 1})
    with pytest.raises(ValidationError):
        driver.invoke(app, {"x": "not-an-int"})


def test_pydantic_input_is_coerced(driver):
    """Input the model can coerce ("5" -> 5) reaches the node coerced."""
    app = _one(PState, lambda s: {"x": s.x + 1})
    assert driver.invoke(app, {"x": "5"}) == {"x": 6, "items": []}


def test_node_returns_pydantic_model(driver):
    """A node may return a state model instance; its fields are written through reducers."""
    app = _one(PState, lambda s: PState(x=9, items=["z"]))
    assert driver.invoke(app, {"x": 1, "items": ["i"]}) == {"x": 9, "items": ["i", "z"]}


def test_node_returns_dataclass(driver):
    """A node may return a dataclass state instance; its fields are written through reducers."""
    app = _one(DState, lambda s: DState(x=9, items=["z"]))
    assert driver.invoke(app, {"x": 1, "items": ["i"]}) == {"x": 9, "items": ["i", "z"]}


def test_overwrite_bypasses_reducer(driver):
    """Overwrite(value) replaces a reducer key instead of merging."""
    app = _one(TState, lambda s: {"items": Overwrite(["fresh"])})
    assert driver.invoke(app, {"items": ["old"]}) == {"items": ["fresh"]}


def test_int_reducer_with_and_without_input(driver):
    """An operator.add int key adds to the input, or starts from the first write."""

    class C(TypedDict):
        total: Annotated[int, operator.add]

    app = _one(C, lambda s: {"total": 5})
    assert driver.invoke(app, {"total": 1}) == {"total": 6}
    assert driver.invoke(app, {}) == {"total": 5}


def test_batch_runs_each_input(driver):
    """batch/abatch run each input independently, results in input order."""
    import asyncio

    app = _one(TState, lambda s: {"items": ["a"]})
    inputs = [{"items": [1]}, {"items": [2]}]
    if driver.is_async:
        out = asyncio.run(app.abatch(inputs))
    else:
        out = app.batch(inputs)
    assert out == [{"items": [1, "a"]}, {"items": [2, "a"]}]


def test_max_concurrency_one_still_runs_all(driver):
    """max_concurrency=1 runs parallel nodes one at a time, results unchanged."""
    g = StateGraph(TState)
    for name in "abc":
        g.add_node(name, lambda s, name=name: {"items": [name]})
        g.add_edge(START, name)
    out = driver.invoke(g.compile(), {"items": []}, {"max_concurrency": 1})
    assert out == {"items": ["a", "b", "c"]}


def test_in_place_mutation_of_input_is_visible(driver):
    """Node input is not copied: mutating a reducer list in place shows up, as in LangGraph."""
    seen = []

    def mutate(state: TState) -> dict:
        state["items"].append("mutated")
        return {"items": ["m"]}

    def look(state: TState) -> None:
        seen.append(list(state["items"]))

    g = StateGraph(TState)
    g.add_node("mutate", mutate)
    g.add_node("look", look)
    g.add_edge(START, "mutate")
    g.add_edge("mutate", "look")
    assert driver.invoke(g.compile(), {"items": ["x"]}) == {"items": ["x", "mutated", "m"]}
    assert seen == [["x", "mutated", "m"]]
