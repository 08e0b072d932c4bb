"""Top-level config keys that are not ``RunnableConfig`` keys go into ``configurable``, as in
LangGraph (``graph.invoke(x, {"thread_id": "t"})``)."""

from __future__ import annotations

from typing_extensions import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.config import ensure_config
from stepgraph.graph import START, StateGraph


class S(TypedDict):
    x: int


def test_ensure_config_moves_unknown_keys() -> None:
    out = ensure_config({"thread_id": "t", "tags": ["a"], "configurable": {"k": 1}}, {"user": "u"})
    assert out["configurable"] == {"thread_id": "t", "k": 1, "user": "u"}
    assert "thread_id" not in out and out["tags"] == ["a"]


def test_thread_id_at_the_top_level() -> None:
    builder = StateGraph(S)
    builder.add_node("n", lambda s: {"x": s["x"] + 1})
    builder.add_edge(START, "n")
    graph = builder.compile(checkpointer=InMemorySaver())
    assert graph.invoke({"x": 1}, {"thread_id": "t"}) == {"x": 2}
    assert graph.get_state({"thread_id": "t"}).values == {"x": 2}
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == {"x": 2}
