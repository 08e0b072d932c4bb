"""A task's config carries LangGraph's ``__pregel_runtime`` / ``__pregel_read`` /
``__pregel_send`` keys (code written for LangGraph reads and writes through them)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.config import RunnableConfig, get_config
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import Runtime
from stepgraph.store.memory import InMemoryStore


class S(TypedDict, total=False):
    x: int
    log: Annotated[list[str], operator.add]


def test_read_send_and_runtime_keys() -> None:
    seen: dict[str, Any] = {}

    def node(state: S, config: RunnableConfig) -> S:
        conf = config["configurable"]
        seen["runtime"] = conf["__pregel_runtime"]
        conf["__pregel_send"]([("log", ["sent"]), ("x", 5)])
        seen["stale"] = conf["__pregel_read"]("x")
        seen["fresh"] = conf["__pregel_read"](["x", "log"], True)
        return {"log": ["returned"]}

    builder = StateGraph(S)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    store = InMemoryStore()
    out = builder.compile(store=store).invoke({"x": 1, "log": []})
    assert out == {"x": 5, "log": ["sent", "returned"]}
    assert seen["stale"] == 1 and seen["fresh"] == {"x": 5, "log": ["sent"]}
    assert isinstance(seen["runtime"], Runtime) and seen["runtime"].store is store


def test_a_root_run_uses_the_runtime_its_config_carries() -> None:
    stores = []

    def node(state: S, runtime: Runtime) -> S:
        stores.append(runtime.store)
        return {}

    builder = StateGraph(S)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile()
    store = InMemoryStore()
    graph.invoke({"x": 1}, {"configurable": {"__pregel_runtime": Runtime(store=store)}})
    graph.invoke({"x": 1})
    assert stores == [store, None]


def test_the_keys_are_not_stored_in_checkpoint_metadata() -> None:
    from stepgraph.checkpoint.memory import InMemorySaver

    def node(state: S) -> S:
        assert "__pregel_read" in get_config()["configurable"]
        return {"x": 2}

    builder = StateGraph(S)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"x": 1}, config)
    for snap in graph.get_state_history(config):
        assert not any(k.startswith("__pregel") for k in snap.metadata)


def test_node_bound_reads_through_to_the_users_object() -> None:
    """``graph.nodes[name].bound.<attr>`` reaches the node's runnable (LangGraph's ``bound``
    is that object); indexing still gives stepgraph's steps."""

    class Body:
        marker = "mine"

        def invoke(self, state: Any, config: Any = None) -> Any:
            return {}

    builder = StateGraph(S)
    builder.add_node("n", Body())
    builder.add_edge(START, "n")
    graph = builder.compile()
    assert graph.nodes["n"].bound.marker == "mine"
    assert len(graph.nodes["n"].bound) == 1
