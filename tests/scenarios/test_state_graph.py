"""StateGraph basics: state schemas, reducers, channels, input/output schemas, sequences."""

import operator
from dataclasses import dataclass, field
from typing import Annotated

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError
from stepgraph.graph import END, START, StateGraph


class Counter(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def test_typeddict_state_sequence(driver):
    """A TypedDict state flows through two nodes; the reducer key accumulates in order."""

    def inc(state: Counter) -> dict:
        return {"count": state["count"] + 1, "log": [f"inc:{state['count']}"]}

    def double(state: Counter) -> dict:
        return {"count": state["count"] * 2, "log": [f"double:{state['count']}"]}

    g = StateGraph(Counter)
    g.add_node("inc", inc)
    g.add_node("double", double)
    g.add_edge(START, "inc")
    g.add_edge("inc", "double")
    g.add_edge("double", END)
    app = g.compile()
    assert driver.invoke(app, {"count": 3, "log": ["start"]}) == {
        "count": 8,
        "log": ["start", "inc:3", "double:4"],
    }


@dataclass
class DCState:
    name: str
    items: Annotated[list, operator.add] = field(default_factory=list)
    visits: int = 0


def test_dataclass_state(driver):
    """A dataclass state is handed to nodes as an instance, defaults filled; output is a dict."""
    seen = []

    def node(state: DCState) -> dict:
        seen.append(state)
        return {"items": [state.name.upper()], "visits": state.visits + 1}

    g = StateGraph(DCState)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile()
    out = driver.invoke(app, {"name": "ada"})
    assert out == {"name": "ada", "items": ["ADA"], "visits": 1}
    assert seen == [DCState(name="ada", items=[], visits=0)]


class PState(BaseModel):
    text: str
    tags: Annotated[list[str], operator.add] = []
    length: int = 0


def test_pydantic_state(driver):
    """A pydantic state is validated into a model for the node; the result is a plain dict."""
    seen = []

    def measure(state: PState) -> dict:
        seen.append(state)
        return {"length": len(state.text), "tags": ["measured"]}

    g = StateGraph(PState)
    g.add_node("measure", measure)
    g.add_edge(START, "measure")
    g.add_edge("measure", END)
    app = g.compile()
    out = driver.invoke(app, {"text": "hello"})
    assert out == {"text": "hello", "tags": ["measured"], "length": 5}
    assert seen == [PState(text="hello", tags=[], length=0)]
    assert isinstance(seen[0], PState)


def test_parallel_reducer_writes_in_one_step(driver):
    """Two parallel nodes append to an operator.add key; both writes land in one step."""

    class S(TypedDict):
        out: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"out": ["a"]})
    g.add_node("b", lambda s: {"out": ["b"]})
    g.add_node("c", lambda s: {"out": [f"c saw {len(s['out'])}"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "c")
    app = g.compile()
    assert driver.invoke(app, {"out": []}) == {"out": ["a", "b", "c saw 2"]}


def test_last_value_two_writes_in_one_step_fails(driver):
    """Two parallel writes to a plain (LastValue) key in one step raise InvalidUpdateError."""

    class S(TypedDict):
        value: str

    g = StateGraph(S)
    g.add_node("a", lambda s: {"value": "a"})
    g.add_node("b", lambda s: {"value": "b"})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile()
    with pytest.raises(InvalidUpdateError) as info:
        driver.invoke(app, {"value": "x"})
    assert "value" in str(info.value)


def test_same_value_twice_also_fails(driver):
    """Even identical writes from two nodes to a LastValue key are rejected."""

    class S(TypedDict):
        value: int

    g = StateGraph(S)
    g.add_node("a", lambda s: {"value": 1})
    g.add_node("b", lambda s: {"value": 1})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError):
        driver.invoke(g.compile(), {"value": 0})


def test_reducer_key_is_empty_list_when_unwritten(driver):
    """A reducer key nobody wrote shows up as [] in node input and in the output."""
    seen = []

    class S(TypedDict):
        name: str
        hist: Annotated[list, operator.add]

    def node(state: S) -> dict:
        seen.append(dict(state))
        return {"name": state["name"] + "!"}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile()
    assert driver.invoke(app, {"name": "x"}) == {"name": "x!", "hist": []}
    assert seen == [{"name": "x", "hist": []}]


def test_unset_plain_key_is_absent(driver):
    """A plain key never written is absent from node input and output (not None)."""
    seen = []

    class S(TypedDict):
        a: int
        b: int

    def node(state: S) -> dict:
        seen.append(dict(state))
        return {"a": state["a"] + 1}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    assert driver.invoke(g.compile(), {"a": 1}) == {"a": 2}
    assert seen == [{"a": 1}]


def test_input_keys_not_in_schema_are_ignored(driver):
    """Input keys unknown to the state schema are dropped silently."""
    seen = []

    class S(TypedDict):
        a: int

    def node(state: S) -> dict:
        seen.append(dict(state))
        return {"a": state["a"] * 10}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    assert driver.invoke(g.compile(), {"a": 2, "zzz": "ignored"}) == {"a": 20}
    assert seen == [{"a": 2}]


def test_node_returning_none_writes_nothing(driver):
    """A node returning None leaves the state untouched."""

    class S(TypedDict):
        a: int

    g = StateGraph(S)
    g.add_node("noop", lambda s: None)
    g.add_edge(START, "noop")
    assert driver.invoke(g.compile(), {"a": 5}) == {"a": 5}


class InState(TypedDict):
    question: str


class OutState(TypedDict):
    answer: str


class Overall(TypedDict):
    question: str
    scratch: str
    answer: str


def test_input_and_output_schema(driver):
    """input_schema limits what is read from the input; output_schema limits the result."""
    seen = []

    def think(state: InState) -> dict:
        seen.append(dict(state))
        return {"scratch": state["question"] + "?"}

    def answer(state: Overall) -> dict:
        seen.append(dict(state))
        return {"answer": state["scratch"].upper()}

    g = StateGraph(Overall, input_schema=InState, output_schema=OutState)
    g.add_node("think", think)
    g.add_node("answer", answer)
    g.add_edge(START, "think")
    g.add_edge("think", "answer")
    g.add_edge("answer", END)
    app = g.compile()
    out = driver.invoke(app, {"question": "why", "scratch": "from input", "answer": "pre"})
    assert out == {"answer": "WHY?"}
    assert seen == [{"question": "why"}, {"question": "why", "scratch": "why?"}]


def test_private_channel_from_node_input_schema(driver):
    """A key only in a node's input type (first-param hint) is a private channel."""

    class Public(TypedDict):
        user: str
        greeting: str

    class Private(TypedDict):
        secret: str

    seen = []

    def write_secret(state: Public) -> dict:
        return {"secret": "s-" + state["user"]}

    def use_secret(state: Private) -> dict:
        seen.append(dict(state))
        return {"greeting": "hello " + state["secret"]}

    g = StateGraph(Public)
    g.add_node("write_secret", write_secret)
    g.add_node("use_secret", use_secret)
    g.add_edge(START, "write_secret")
    g.add_edge("write_secret", "use_secret")
    g.add_edge("use_secret", END)
    app = g.compile()
    assert driver.invoke(app, {"user": "bob"}) == {"user": "bob", "greeting": "hello s-bob"}
    assert seen == [{"secret": "s-bob"}]


def test_node_input_schema_kwarg(driver):
    """add_node(input_schema=...) picks the keys the node is given."""

    class S(TypedDict):
        a: int
        b: int

    class OnlyB(TypedDict):
        b: int

    seen = []

    def node(state):
        seen.append(dict(state))
        return {"a": state["b"]}

    g = StateGraph(S)
    g.add_node("node", node, input_schema=OnlyB)
    g.add_edge(START, "node")
    assert driver.invoke(g.compile(), {"a": 1, "b": 2}) == {"a": 2, "b": 2}
    assert seen == [{"b": 2}]


def test_add_sequence(driver):
    """add_sequence wires functions (named by __name__) and (name, fn) pairs in order."""

    class S(TypedDict):
        trail: Annotated[list, operator.add]

    def first(state: S) -> dict:
        return {"trail": ["first"]}

    def second(state: S) -> dict:
        return {"trail": ["second"]}

    g = StateGraph(S)
    g.add_sequence([first, second, ("third", lambda s: {"trail": ["third"]})])
    g.add_edge(START, "first")
    app = g.compile()
    assert driver.invoke(app, {"trail": []}) == {"trail": ["first", "second", "third"]}
    assert set(app.nodes) == {"__start__", "first", "second", "third"}


def test_set_entry_and_finish_point(driver):
    """set_entry_point/set_finish_point are START/END edges."""

    class S(TypedDict):
        n: int

    g = StateGraph(S)
    g.add_node("one", lambda s: {"n": s["n"] + 1})
    g.add_node("two", lambda s: {"n": s["n"] * 3})
    g.set_entry_point("one")
    g.add_edge("one", "two")
    g.set_finish_point("two")
    assert driver.invoke(g.compile(), {"n": 1}) == {"n": 6}


def test_add_node_name_from_function(driver):
    """add_node(fn) names the node after the function."""

    class S(TypedDict):
        n: int

    def grow(state: S) -> dict:
        return {"n": state["n"] + 100}

    g = StateGraph(S)
    g.add_node(grow)
    g.add_edge(START, "grow")
    app = g.compile()
    assert "grow" in app.nodes
    assert driver.invoke(app, {"n": 1}) == {"n": 101}


def test_custom_reducer_function(driver):
    """A user reducer (left, right) -> merged is applied to every write, input included."""

    def merge_dicts(left: dict, right: dict) -> dict:
        return {**left, **right}

    class S(TypedDict):
        data: Annotated[dict, merge_dicts]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"data": {"a": 1}})
    g.add_node("b", lambda s: {"data": {"b": 2, "x": "b"}})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    out = driver.invoke(g.compile(), {"data": {"x": "in"}})
    assert out == {"data": {"x": "b", "a": 1, "b": 2}}


def test_invoke_twice_is_independent(driver):
    """Without a checkpointer each invoke starts from a blank state."""

    class S(TypedDict):
        log: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("n", lambda s: {"log": ["n"]})
    g.add_edge(START, "n")
    app = g.compile()
    assert driver.invoke(app, {"log": ["a"]}) == {"log": ["a", "n"]}
    assert driver.invoke(app, {"log": ["b"]}) == {"log": ["b", "n"]}
