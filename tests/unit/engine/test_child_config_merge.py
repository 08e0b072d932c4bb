"""A graph called inside a node keeps the parent run's metadata and tags, key by key (its
own bound or given ones win), as LangGraph's config merge does."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from stepgraph.config import RunnableConfig
from stepgraph.graph import START, StateGraph


class S(TypedDict, total=False):
    x: int


def test_parent_metadata_and_tags_reach_the_child_run() -> None:
    seen: dict[str, Any] = {}

    def inner(state: S, config: RunnableConfig) -> S:
        seen.update(metadata=config["metadata"], tags=config["tags"])
        return {}

    child_builder = StateGraph(S)
    child_builder.add_node("inner", inner)
    child_builder.add_edge(START, "inner")
    child = child_builder.compile().with_config({"metadata": {"agent": "child", "bound": 1}})

    def outer(state: S, config: RunnableConfig) -> S:
        child.invoke(state, {"tags": ["call-tag"], "metadata": {"given": 2}})
        return {}

    parent_builder = StateGraph(S)
    parent_builder.add_node("outer", outer)
    parent_builder.add_edge(START, "outer")
    parent_builder.compile().invoke(
        {"x": 1}, {"metadata": {"customer_id": "c-1", "agent": "parent"}, "tags": ["root-tag"]})
    meta = seen["metadata"]
    assert meta["customer_id"] == "c-1" and meta["agent"] == "child"
    assert meta["bound"] == 1 and meta["given"] == 2 and meta["langgraph_node"] == "inner"
    assert "root-tag" in seen["tags"] and "call-tag" in seen["tags"]
