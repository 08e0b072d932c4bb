"""What one run sets up before its first step: the graph's tables made at compile, the
run's config and print modes, and the stream sink's waiter (made only when a step has
several tasks)."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

from stepgraph.channels import EphemeralValue, LastValue
from stepgraph.config import with_run_metadata
from stepgraph.graph import END, START, StateGraph
from stepgraph.pregel import NodeBuilder, Pregel
from stepgraph.stream.sink import StreamSink


class State(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


def _fan_graph() -> Any:
    def a(state: State) -> dict[str, Any]:
        return {"x": state["x"] + 1, "log": ["a"]}

    def b(state: State) -> dict[str, Any]:
        return {"log": ["b"]}

    def c(state: State) -> dict[str, Any]:
        return {"log": ["c"]}

    g = StateGraph(State)
    g.add_node("a", a).add_node("b", b).add_node("c", c)
    g.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    g.add_edge("b", END).add_edge("c", END)
    return g.compile()


def test_compile_makes_the_tables_a_run_reads() -> None:
    graph = _fan_graph()
    assert graph._kinds is not None  # made by compile, not by the first run
    assert graph._trigger_to_nodes is not None
    assert graph._delta_keys == ()
    volatile, _ = graph.channel_kinds()
    assert graph.volatile_set() == frozenset(volatile)
    assert graph.volatile_set() is graph.volatile_set()


def test_volatile_set_follows_the_kinds_after_validate() -> None:
    graph = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")},
        channels={"a": LastValue(int), "b": EphemeralValue(int)},
        input_channels="a",
        output_channels="b",
    )
    before = graph.volatile_set()
    assert "b" in before and "a" not in before
    graph.channels["c"] = EphemeralValue(int)
    graph.validate()
    assert graph.volatile_set() == before | {"c"}
    assert graph.invoke(3) == 3


def test_volatile_output_key_keeps_its_last_value() -> None:
    graph = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(lambda x: x * 2).write_to("b")},
        channels={"a": LastValue(int), "b": EphemeralValue(int)},
        input_channels="a",
        output_channels=["b"],
    )
    assert graph.invoke(4) == {"b": 8}


def test_run_metadata_without_configurable_is_the_same_config() -> None:
    cfg: Any = {"tags": [], "metadata": {}, "configurable": {}, "recursion_limit": 5}
    assert with_run_metadata(cfg) is cfg
    cfg2: Any = {"metadata": {"a": 1}, "configurable": {"thread_id": "t", "other": 2}}
    assert with_run_metadata(cfg2)["metadata"] == {"a": 1, "thread_id": "t"}


def test_print_modes(capsys: Any) -> None:
    graph = _fan_graph()
    graph.invoke({"x": 0, "log": []})
    graph.invoke({"x": 0, "log": []}, print_mode=[])
    assert capsys.readouterr().out == ""
    graph.invoke({"x": 0, "log": []}, print_mode="updates")
    out = capsys.readouterr().out
    assert "[updates]" in out and "[values]" not in out
    graph.invoke({"x": 0, "log": []}, debug=True)
    out = capsys.readouterr().out
    assert "[updates]" in out and "[values]" in out


def test_sink_waiter_is_made_once() -> None:
    sink = StreamSink(frozenset({"updates"}))
    first = sink.sync_waiter()
    assert isinstance(first, threading.Event)
    assert sink.sync_waiter() is first
    sink.emit((), "updates", {"a": 1})
    assert first.is_set()


def test_steps_of_several_tasks_stream_each_update() -> None:
    graph = _fan_graph()
    parts = list(graph.stream({"x": 0, "log": []}, stream_mode="updates"))
    assert parts[0] == {"a": {"x": 1, "log": ["a"]}}
    assert sorted(next(iter(p)) for p in parts[1:]) == ["b", "c"]
    assert graph.invoke({"x": 0, "log": []}) == {"x": 1, "log": ["a", "b", "c"]}
