"""``langgraph._internal._runnable.RunnableCallable`` (stepgraph.compat.mirror): injection."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import TypedDict

from stepgraph.compat.mirror._internal._runnable import RunnableCallable, coerce_to_runnable
from stepgraph.errors import GraphDefinitionError
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import Runtime
from stepgraph.store.memory import InMemoryStore


class S(TypedDict, total=False):
    x: int
    seen: list[str]


def test_nodes_get_config_runtime_store_and_writer() -> None:
    def body(state: S, config: Any, runtime: Runtime, store: Any, writer: Any) -> S:
        writer({"custom": state["x"]})
        store.put(("ns",), "k", {"v": state["x"]})
        return {"seen": [config["metadata"]["langgraph_node"], type(runtime).__name__]}

    async def abody(state: S, runtime: Runtime) -> S:
        return {"seen": ["async", type(runtime.store).__name__]}

    builder = StateGraph(S)
    builder.add_node("n", RunnableCallable(body, abody, trace=False))
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    store = InMemoryStore()
    graph = builder.compile(store=store)
    chunks = list(graph.stream({"x": 3}, stream_mode=["custom", "values"]))
    assert ("custom", {"custom": 3}) in chunks
    assert chunks[-1] == ("values", {"x": 3, "seen": ["n", "Runtime"]})
    assert store.get(("ns",), "k").value == {"v": 3}


async def test_ainvoke_uses_the_async_twin() -> None:
    async def abody(state: S, runtime: Runtime) -> S:
        return {"seen": ["async", type(runtime.store).__name__]}

    builder = StateGraph(S)
    builder.add_node("n", RunnableCallable(lambda s: {"seen": ["sync"]}, abody))
    builder.add_edge(START, "n")
    graph = builder.compile(store=InMemoryStore())
    assert (await graph.ainvoke({"x": 1}))["seen"] == ["async", "InMemoryStore"]
    assert graph.invoke({"x": 1})["seen"] == ["sync"]


def test_runtime_from_the_config_wins() -> None:
    seen = []
    node = RunnableCallable(lambda s, runtime: seen.append(runtime.context) or s)
    node.invoke({}, {"configurable": {"__pregel_runtime": Runtime(context="ctx")}})
    node.invoke({})  # outside a graph: an empty Runtime
    assert seen == ["ctx", None]


def test_a_required_store_outside_a_graph_is_sg110() -> None:
    node = RunnableCallable(lambda s, store: s, name="needs_store")
    with pytest.raises(GraphDefinitionError) as info:
        node.invoke({})
    assert info.value.code == "SG110" and "needs_store" in str(info.value)
    assert RunnableCallable(lambda s, store=None: store).invoke({}) is None


def test_names_recursion_and_coercion() -> None:
    def named(x: int) -> int:
        return x + 1

    assert RunnableCallable(named).get_name() == "named"
    inner = RunnableCallable(lambda x: x * 10)
    assert RunnableCallable(lambda x: inner).invoke(2) == 20
    assert RunnableCallable(lambda x: inner, recurse=False).invoke(2) is inner
    assert coerce_to_runnable(named).invoke(1) == 2
    with pytest.raises(ValueError):
        RunnableCallable(None, None)
