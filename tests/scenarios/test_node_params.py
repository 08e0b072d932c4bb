"""What a node can ask for besides its state: config, runtime, writer, store, context."""

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.config import get_config, get_stream_writer
from stepgraph.graph import START, StateGraph
from stepgraph.runtime import Runtime, get_runtime
from stepgraph.types import StreamWriter


class S(TypedDict):
    log: Annotated[list, operator.add]


@dataclass
class Ctx:
    user: str
    lang: str = "en"


def _one_node_graph(fn, **graph_kwargs):
    g = StateGraph(S, **graph_kwargs)
    g.add_node("node", fn)
    g.add_edge(START, "node")
    return g


def test_node_takes_config(driver):
    """A node with a `config` parameter gets the run config with configurable values."""

    def node(state: S, config) -> dict:
        return {"log": [config["configurable"]["user_id"], config["metadata"]["langgraph_node"]]}

    app = _one_node_graph(node).compile()
    out = driver.invoke(app, {"log": []}, {"configurable": {"user_id": "u1"}})
    assert out == {"log": ["u1", "node"]}


def test_get_config_inside_node(driver):
    """get_config() inside a node returns the same config, with step/node metadata."""

    def node(state: S) -> dict:
        cfg = get_config()
        meta = cfg["metadata"]
        return {
            "log": [
                cfg["configurable"]["user_id"],
                meta["langgraph_step"],
                meta["langgraph_node"],
                meta["langgraph_triggers"],
                meta["tag"],
            ]
        }

    app = _one_node_graph(node).compile()
    config = {"configurable": {"user_id": "u2"}, "metadata": {"tag": "t"}}
    out = driver.invoke(app, {"log": []}, config)
    assert out == {"log": ["u2", 1, "node", ("branch:to:node",), "t"]}


def test_get_config_outside_node_raises():
    """get_config() outside a running node raises RuntimeError."""
    with pytest.raises(RuntimeError):
        get_config()


def test_context_schema_and_runtime_param(driver):
    """invoke(context=...) reaches a node's `runtime: Runtime[Ctx]` parameter."""

    def node(state: S, runtime: Runtime[Ctx]) -> dict:
        return {"log": [runtime.context.user, runtime.context.lang]}

    app = _one_node_graph(node, context_schema=Ctx).compile()
    out = driver.invoke(app, {"log": []}, context=Ctx(user="ann", lang="fr"))
    assert out == {"log": ["ann", "fr"]}


def test_context_given_as_dict_is_coerced(driver):
    """A dict context is turned into the dataclass context_schema (defaults filled)."""
    seen = []

    def node(state: S, runtime: Runtime[Ctx]) -> dict:
        seen.append(runtime.context)
        return {"log": [runtime.context.user]}

    app = _one_node_graph(node, context_schema=Ctx).compile()
    assert driver.invoke(app, {"log": []}, context={"user": "bo"}) == {"log": ["bo"]}
    assert seen == [Ctx(user="bo", lang="en")]


def test_get_runtime_inside_node(driver):
    """get_runtime() inside a node returns the runtime with the run's context."""

    def node(state: S) -> dict:
        rt = get_runtime(Ctx)
        return {"log": [rt.context.user]}

    app = _one_node_graph(node, context_schema=Ctx).compile()
    assert driver.invoke(app, {"log": []}, context=Ctx(user="cy")) == {"log": ["cy"]}


def test_runtime_without_context(driver):
    """Without context=, runtime.context is None and runtime.store is None."""
    seen = []

    def node(state: S, runtime: Runtime) -> dict:
        seen.append((runtime.context, runtime.store))
        return {"log": ["ok"]}

    app = _one_node_graph(node).compile()
    assert driver.invoke(app, {"log": []}) == {"log": ["ok"]}
    assert seen == [(None, None)]


def test_async_node_with_runtime(driver):
    """An async node gets the runtime too (async driver; the sync driver cannot run it)."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")

    async def node(state: S, runtime: Runtime[Ctx]) -> dict:
        await asyncio.sleep(0)
        return {"log": [runtime.context.user, get_config()["metadata"]["langgraph_node"]]}

    app = _one_node_graph(node, context_schema=Ctx).compile()
    assert driver.invoke(app, {"log": []}, context=Ctx(user="dee")) == {"log": ["dee", "node"]}


def test_writer_param_streams_custom(driver):
    """A node with a `writer` parameter writes chunks to the custom stream."""

    def node(state: S, writer: StreamWriter) -> dict:
        writer({"progress": 1})
        writer("half")
        return {"log": ["done"]}

    app = _one_node_graph(node).compile()
    chunks = driver.stream(app, {"log": []}, stream_mode="custom")
    assert chunks == [{"progress": 1}, "half"]


def test_writer_is_noop_without_custom_mode(driver):
    """Writing custom chunks when the custom mode is not streamed is harmless."""

    def node(state: S, writer: StreamWriter) -> dict:
        writer("ignored")
        get_stream_writer()("ignored too")
        return {"log": ["done"]}

    app = _one_node_graph(node).compile()
    assert driver.invoke(app, {"log": []}) == {"log": ["done"]}
    assert driver.stream(app, {"log": []}, stream_mode="updates") == [{"node": {"log": ["done"]}}]


class FakeStore:
    """Any object can be a store; nodes get back exactly what compile() was given."""

    def __init__(self):
        self.data = {}


def test_store_param_and_runtime_store(driver):
    """compile(store=...) reaches nodes as `store` and as `runtime.store`."""
    store = FakeStore()
    seen = []

    def writer_node(state: S, store) -> dict:
        store.data["k"] = "v"
        seen.append(store)
        return {"log": ["w"]}

    def reader_node(state: S, runtime: Runtime) -> dict:
        seen.append(runtime.store)
        return {"log": [runtime.store.data["k"]]}

    g = StateGraph(S)
    g.add_node("writer_node", writer_node)
    g.add_node("reader_node", reader_node)
    g.add_edge(START, "writer_node")
    g.add_edge("writer_node", "reader_node")
    app = g.compile(store=store)
    assert driver.invoke(app, {"log": []}) == {"log": ["w", "v"]}
    assert seen == [store, store]


def test_config_and_runtime_together(driver):
    """A node may ask for config and runtime at once, by keyword name."""

    def node(state: S, config, runtime: Runtime[Ctx]) -> dict:
        return {"log": [config["configurable"]["x"], runtime.context.user]}

    app = _one_node_graph(node, context_schema=Ctx).compile()
    out = driver.invoke(app, {"log": []}, {"configurable": {"x": 1}}, context=Ctx(user="z"))
    assert out == {"log": [1, "z"]}


def test_config_tags_and_recursion_limit_visible(driver):
    """Tags and recursion_limit from the run config are visible in get_config()."""

    def node(state: S) -> dict:
        cfg = get_config()
        return {"log": [cfg["recursion_limit"], "mytag" in cfg["tags"]]}

    app = _one_node_graph(node).compile()
    out = driver.invoke(app, {"log": []}, {"recursion_limit": 7, "tags": ["mytag"]})
    assert out == {"log": [7, True]}


def test_with_config_defaults(driver):
    """graph.with_config(configurable=...) supplies defaults a run config may override."""

    def node(state: S, config) -> dict:
        return {"log": [config["configurable"]["who"]]}

    app = _one_node_graph(node).compile().with_config(configurable={"who": "default"})
    assert driver.invoke(app, {"log": []}) == {"log": ["default"]}
    assert driver.invoke(app, {"log": []}, {"configurable": {"who": "given"}}) == {"log": ["given"]}
