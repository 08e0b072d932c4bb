"""``engine/saving.py``: what each checkpoint's metadata takes from the run's config."""

from __future__ import annotations

from typing import Any, TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph


class State(TypedDict):
    n: int


def _graph(saver: InMemorySaver) -> Any:
    def inc(state: State) -> dict[str, int]:
        return {"n": state["n"] + 1}

    def route(state: State) -> str:
        return "inc" if state["n"] < 3 else "__end__"

    builder = StateGraph(State)
    builder.add_node("inc", inc)
    builder.add_edge(START, "inc")
    builder.add_conditional_edges("inc", route)
    return builder.compile(checkpointer=saver)


def test_every_checkpoint_carries_the_config_metadata_in_its_own_maps() -> None:
    """Each checkpoint of a run gets the config's primitive metadata (NUL stripped, private
    and engine keys left out) and a ``parents`` map of its own, also when the next run
    of the thread has another config."""
    saver = InMemorySaver()
    graph = _graph(saver)
    config: Any = {
        "configurable": {"thread_id": "t", "tag": "x\x00y", "__private": 1, "obj": object()},
        "metadata": {"user": "u", "count": 2},
    }
    streamed = [
        part["metadata"]
        for part in graph.stream({"n": 0}, config, stream_mode="checkpoints")
    ]
    assert len(streamed) == 5
    for metadata in streamed:
        assert {k: metadata[k] for k in ("tag", "user", "count")} == {
            "tag": "xy", "user": "u", "count": 2
        }
        assert "__private" not in metadata and "obj" not in metadata
        assert metadata["parents"] == {}
    assert len({id(m["parents"]) for m in streamed}) == len(streamed)
    assert [m["step"] for m in streamed] == [-1, 0, 1, 2, 3]

    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}, "metadata": {"user": "v"}})
    latest = graph.get_state({"configurable": {"thread_id": "t"}}).metadata
    assert latest is not None and latest["user"] == "v" and "tag" not in latest
    history = [s.metadata for s in graph.get_state_history({"configurable": {"thread_id": "t"}})]
    assert sum(1 for m in history if m and m.get("tag") == "xy") == 5
