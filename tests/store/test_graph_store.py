"""Nodes reach the store given to compile(store=) through the runtime and get_store()."""

from __future__ import annotations

from typing import Any, TypedDict

from stepgraph.config import get_store
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import Runtime
from stepgraph.store.memory import InMemoryStore
from stepgraph.store.sqlite.aio import AsyncSqliteStore


class State(TypedDict):
    n: int


def build(node: Any, store: Any) -> Any:
    graph = StateGraph(State)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    graph.add_edge("node", END)
    return graph.compile(store=store)


def test_sync_node_uses_store() -> None:
    """A sync node writes through runtime.store and reads through get_store()."""

    def node(state: State, runtime: Runtime) -> dict:
        runtime.store.put(("mem",), str(state["n"]), {"n": state["n"]})
        return {"n": len(get_store().search(("mem",)))}

    store = InMemoryStore()
    app = build(node, store)
    assert app.invoke({"n": 5}) == {"n": 1} and app.invoke({"n": 6}) == {"n": 2}
    assert store.get(("mem",), "5").value == {"n": 5}


async def test_async_node_uses_sqlite_store(tmp_path: Any) -> None:
    """An async node awaits the store's async methods."""

    async def node(state: State, runtime: Runtime) -> dict:
        await runtime.store.aput(("mem",), "k", {"n": state["n"]})
        return {"n": (await runtime.store.aget(("mem",), "k")).value["n"] + 1}

    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
        assert await build(node, store).ainvoke({"n": 1}) == {"n": 2}
