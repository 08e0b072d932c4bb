"""Streaming: values, updates, custom, tasks, debug, checkpoints, several modes, v2 parts."""

import operator
import re
from typing import Annotated

from typing_extensions import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.config import get_stream_writer
from stepgraph.graph import START, StateGraph
from stepgraph.types import StreamWriter

TRIGGERS_BUG = "stepgraph bug: task payload 'triggers' is a list, LangGraph gives a tuple"
NO_SAVER_BUG = "stepgraph bug: checkpoint events are streamed even without a checkpointer"


class S(TypedDict):
    n: int
    trail: Annotated[list, operator.add]


def _two_steps():
    """a (writes n and trail, emits a custom chunk) -> b (writes trail)."""

    def a(state: S) -> dict:
        get_stream_writer()({"from": "a"})
        return {"n": state["n"] + 1, "trail": ["a"]}

    def b(state: S, writer: StreamWriter) -> dict:
        writer("b-chunk")
        return {"trail": ["b"]}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def normalise(obj):
    """Replace uuids by '<id>' and ISO timestamps by '<ts>', recursively."""
    if isinstance(obj, dict):
        return {k: normalise(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [normalise(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(normalise(v) for v in obj)
    if isinstance(obj, str) and _UUID.match(obj):
        return "<id>"
    if isinstance(obj, str) and _TS.match(obj):
        return "<ts>"
    return obj


def test_values_mode(driver):
    """values yields the input state, then the full state after every step."""
    chunks = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="values")
    assert chunks == [
        {"n": 1, "trail": []},
        {"n": 2, "trail": ["a"]},
        {"n": 2, "trail": ["a", "b"]},
    ]


def test_updates_mode(driver):
    """updates yields {node: its writes} per finished task."""
    chunks = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="updates")
    assert chunks == [{"a": {"n": 2, "trail": ["a"]}}, {"b": {"trail": ["b"]}}]


def test_default_stream_mode_is_updates(driver):
    """A compiled StateGraph streams updates when no mode is given."""
    chunks = driver.stream(_two_steps().compile(), {"n": 1})
    assert chunks == [{"a": {"n": 2, "trail": ["a"]}}, {"b": {"trail": ["b"]}}]


def test_updates_of_node_returning_none(driver):
    """A node that writes nothing shows as {node: None} in updates."""
    g = StateGraph(S)
    g.add_node("quiet", lambda s: None)
    g.add_edge(START, "quiet")
    assert driver.stream(g.compile(), {"n": 1}, stream_mode="updates") == [{"quiet": None}]


def test_custom_mode(driver):
    """custom yields what get_stream_writer() and the writer param emit, in order."""
    chunks = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="custom")
    assert chunks == [{"from": "a"}, "b-chunk"]


def test_several_modes_give_tuples(driver):
    """A list of modes yields (mode, chunk) tuples; custom chunks come before their step's updates."""
    chunks = driver.stream(
        _two_steps().compile(), {"n": 1}, stream_mode=["values", "updates", "custom"]
    )
    assert chunks == [
        ("values", {"n": 1, "trail": []}),
        ("custom", {"from": "a"}),
        ("updates", {"a": {"n": 2, "trail": ["a"]}}),
        ("values", {"n": 2, "trail": ["a"]}),
        ("custom", "b-chunk"),
        ("updates", {"b": {"trail": ["b"]}}),
        ("values", {"n": 2, "trail": ["a", "b"]}),
    ]


def test_single_mode_in_list_still_gives_tuples(driver):
    """stream_mode=["updates"] yields tuples even for one mode."""
    chunks = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode=["updates"])
    assert chunks == [("updates", {"a": {"n": 2, "trail": ["a"]}}), ("updates", {"b": {"trail": ["b"]}})]


def test_invoke_with_stream_mode_returns_list(driver):
    """invoke(stream_mode="updates") returns the list of chunks."""
    out = driver.invoke(_two_steps().compile(), {"n": 1}, stream_mode="updates")
    assert out == [{"a": {"n": 2, "trail": ["a"]}}, {"b": {"trail": ["b"]}}]


def test_tasks_mode_pairs_starts_and_results(driver):
    """tasks yields a start event then a result event per task, sharing the task id."""
    events = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="tasks")
    assert [sorted(e) for e in events] == [
        ["id", "input", "name", "triggers"],
        ["error", "id", "interrupts", "name", "result"],
        ["id", "input", "name", "triggers"],
        ["error", "id", "interrupts", "name", "result"],
    ]
    assert events[0]["id"] == events[1]["id"] != events[2]["id"] == events[3]["id"]
    assert [(e["name"], e.get("input"), e.get("result")) for e in events] == [
        ("a", {"n": 1, "trail": []}, None),
        ("a", None, {"n": 2, "trail": ["a"]}),
        ("b", {"n": 2, "trail": ["a"]}, None),
        ("b", None, {"trail": ["b"]}),
    ]
    assert [e.get("error", "-") for e in events] == ["-", None, "-", None]


def test_tasks_mode_exact(driver):
    """tasks payloads match LangGraph exactly (ids normalised)."""
    events = normalise(driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="tasks"))
    assert events == [
        {"id": "<id>", "name": "a", "input": {"n": 1, "trail": []}, "triggers": ("branch:to:a",)},
        {"id": "<id>", "name": "a", "error": None, "result": {"n": 2, "trail": ["a"]}, "interrupts": []},
        {"id": "<id>", "name": "b", "input": {"n": 2, "trail": ["a"]}, "triggers": ("branch:to:b",)},
        {"id": "<id>", "name": "b", "error": None, "result": {"trail": ["b"]}, "interrupts": []},
    ]


def test_debug_without_checkpointer_has_no_checkpoint_events(driver):
    """Without a checkpointer, debug yields only task and task_result events."""
    events = driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="debug")
    assert [(e["type"], e["step"]) for e in events] == [
        ("task", 1),
        ("task_result", 1),
        ("task", 2),
        ("task_result", 2),
    ]


def test_checkpoints_mode_without_checkpointer_is_empty(driver):
    """Without a checkpointer, the checkpoints mode yields nothing."""
    assert driver.stream(_two_steps().compile(), {"n": 1}, stream_mode="checkpoints") == []


def _cfg(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}


def _checkpoint(step, source, nxt, values, tasks, thread, parent=True):
    cfg = {"configurable": {"checkpoint_id": "<id>", "checkpoint_ns": "", "thread_id": thread}}
    return {
        "config": cfg,
        "metadata": {"parents": {}, "source": source, "step": step},
        "next": nxt,
        "parent_config": cfg if parent else None,
        "tasks": [{"id": "<id>", "interrupts": (), "name": t, "state": None} for t in tasks],
        "values": values,
    }


def _one_node_saved():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "trail": ["a"]})
    g.add_edge(START, "a")
    return g.compile(checkpointer=InMemorySaver())


def test_checkpoints_mode_with_checkpointer(driver):
    """checkpoints yields a snapshot per saved checkpoint (input, then each step)."""
    events = normalise(driver.stream(_one_node_saved(), {"n": 1}, _cfg("t1"), stream_mode="checkpoints"))
    assert events == [
        _checkpoint(-1, "input", ["__start__"], {"trail": []}, ["__start__"], "t1", parent=False),
        _checkpoint(0, "loop", ["a"], {"n": 1, "trail": []}, ["a"], "t1"),
        _checkpoint(1, "loop", [], {"n": 2, "trail": ["a"]}, [], "t1"),
    ]


def test_debug_mode_with_checkpointer_exact(driver):
    """debug wraps checkpoint, task and task_result payloads with step/type/timestamp."""
    events = normalise(driver.stream(_one_node_saved(), {"n": 1}, _cfg("t2"), stream_mode="debug"))
    assert events == [
        {"type": "checkpoint", "step": -1, "timestamp": "<ts>",
         "payload": _checkpoint(-1, "input", ["__start__"], {"trail": []}, ["__start__"], "t2", parent=False)},
        {"type": "checkpoint", "step": 0, "timestamp": "<ts>",
         "payload": _checkpoint(0, "loop", ["a"], {"n": 1, "trail": []}, ["a"], "t2")},
        {"type": "task", "step": 1, "timestamp": "<ts>",
         "payload": {"id": "<id>", "name": "a", "input": {"n": 1, "trail": []}, "triggers": ("branch:to:a",)}},
        {"type": "task_result", "step": 1, "timestamp": "<ts>",
         "payload": {"id": "<id>", "name": "a", "error": None, "result": {"n": 2, "trail": ["a"]},
                     "interrupts": []}},
        {"type": "checkpoint", "step": 1, "timestamp": "<ts>",
         "payload": _checkpoint(1, "loop", [], {"n": 2, "trail": ["a"]}, [], "t2")},
    ]


def test_debug_mode_event_kinds_with_checkpointer(driver):
    """debug with a checkpointer interleaves checkpoint and task events per step."""
    events = driver.stream(_one_node_saved(), {"n": 1}, _cfg("t3"), stream_mode="debug")
    assert [(e["type"], e["step"]) for e in events] == [
        ("checkpoint", -1),
        ("checkpoint", 0),
        ("task", 1),
        ("task_result", 1),
        ("checkpoint", 1),
    ]
    assert events[2]["payload"]["id"] == events[3]["payload"]["id"]
    assert events[3]["payload"]["result"] == {"n": 2, "trail": ["a"]}


def test_invoke_v2_returns_graph_output(driver):
    """invoke(version="v2") returns GraphOutput(value=..., interrupts=())."""
    out = driver.invoke(_two_steps().compile(), {"n": 1}, version="v2")
    assert type(out).__name__ == "GraphOutput"
    assert out.value == {"n": 2, "trail": ["a", "b"]}
    assert out.interrupts == ()


def test_stream_v2_parts(driver):
    """stream(version="v2") yields dict parts with type, ns and data."""
    app = _two_steps().compile()
    parts = driver.stream(app, {"n": 1}, stream_mode=["updates", "custom"], version="v2")
    assert parts == [
        {"type": "custom", "ns": (), "data": {"from": "a"}},
        {"type": "updates", "ns": (), "data": {"a": {"n": 2, "trail": ["a"]}}},
        {"type": "custom", "ns": (), "data": "b-chunk"},
        {"type": "updates", "ns": (), "data": {"b": {"trail": ["b"]}}},
    ]
    values = driver.stream(app, {"n": 1}, stream_mode="values", version="v2")
    assert values == [
        {"type": "values", "ns": (), "data": {"n": 1, "trail": []}, "interrupts": ()},
        {"type": "values", "ns": (), "data": {"n": 2, "trail": ["a"]}, "interrupts": ()},
        {"type": "values", "ns": (), "data": {"n": 2, "trail": ["a", "b"]}, "interrupts": ()},
    ]


def test_parallel_updates_in_one_step(driver):
    """Parallel tasks each yield their own updates chunk, in node order."""
    g = StateGraph(S)
    g.add_node("x", lambda s: {"trail": ["x"]})
    g.add_node("y", lambda s: {"trail": ["y"]})
    g.add_edge(START, "x")
    g.add_edge(START, "y")
    chunks = driver.stream(g.compile(), {"n": 0}, stream_mode=["updates", "values"])
    assert chunks[0] == ("values", {"n": 0, "trail": []})
    assert sorted(chunks[1:3], key=repr) == [("updates", {"x": {"trail": ["x"]}}), ("updates", {"y": {"trail": ["y"]}})]
    assert chunks[3:] == [("values", {"n": 0, "trail": ["x", "y"]})]


def test_output_keys_filter_values(driver):
    """output_keys restricts values chunks; a step that did not touch them yields nothing."""
    app = _two_steps().compile()
    chunks = driver.stream(app, {"n": 1}, stream_mode="values", output_keys=["trail"])
    assert chunks == [{"trail": ["a"]}, {"trail": ["a", "b"]}]
    chunks = driver.stream(app, {"n": 1, "trail": ["in"]}, stream_mode="values", output_keys="trail")
    assert chunks == [["in"], ["in", "a"], ["in", "a", "b"]]


def test_tasks_stream_carries_user_metadata_and_tags(driver):
    """A ``tasks`` start payload carries the node's metadata and the run's tags, not the
    framework's ``langgraph_*`` keys."""
    g = StateGraph(dict).add_node("n", lambda s: {}, metadata={"owner": "me"}).add_edge(START, "n")
    parts = driver.stream(g.compile(), {"x": 1}, {"tags": ["run-tag"]}, stream_mode="tasks")
    start = next(p for p in parts if "input" in p)
    assert start["metadata"] == {"owner": "me", "tags": ["run-tag"]}
