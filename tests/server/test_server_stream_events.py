"""Stream details as on LangGraph's server: ``events`` mode has ``on_chain_stream`` events (the
node's output, then the graph's ``{node: output}`` chunk); ``tasks`` events carry ``metadata``."""

from __future__ import annotations

from typing import Any


def test_events_mode_has_on_chain_stream(client: Any) -> None:
    thread = client.threads.create()
    events = [p.data for p in client.runs.stream(thread["thread_id"], "simple", input={"value": "c"},
                                                 stream_mode="events") if p.event == "events"]
    streams = [(e["name"], e["data"]["chunk"]) for e in events if e["event"] == "on_chain_stream"]
    assert streams == [("a", {"value": "ca", "steps": ["a"]}), ("simple", {"a": {"value": "ca", "steps": ["a"]}}),
                       ("b", {"value": "cab", "steps": ["b"]}), ("simple", {"b": {"value": "cab", "steps": ["b"]}})]
    names = [(e["event"], e["name"]) for e in events]
    assert names.index(("on_chain_stream", "a")) < names.index(("on_chain_end", "a"))
    assert names[-1] == ("on_chain_end", "simple")


def test_tasks_events_carry_metadata(client: Any) -> None:
    thread = client.threads.create()
    parts = [p.data for p in client.runs.stream(thread["thread_id"], "simple", input={"value": "c"},
                                                stream_mode="tasks", metadata={"mine": 1},
                                                config={"tags": ["t1"]}) if p.event == "tasks"]
    starts = [p for p in parts if "input" in p]
    assert [p["name"] for p in starts] == ["a", "b"]
    for p in starts:
        assert p["metadata"]["mine"] == 1 and p["metadata"]["graph_id"] == "simple"
        assert p["metadata"]["tags"] == ["t1"]
        assert "langgraph_node" not in p["metadata"]  # framework keys stay out, as on LangGraph
