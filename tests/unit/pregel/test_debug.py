"""``stepgraph.pregel.debug``: task payloads carry user metadata and tags, never framework keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stepgraph.pregel.debug import map_debug_task_results, map_debug_tasks, map_task_result_writes
from stepgraph.types import Interrupt


@dataclass
class FakeTask:
    config: dict[str, Any] | None
    id: str = "t1"
    name: str = "tools"
    input: Any = None
    triggers: list[str] = field(default_factory=lambda: ["x"])


def test_metadata_is_filtered_and_copied() -> None:
    md = {"lc_agent_name": "agent", "langgraph_step": 3, "thread_id": "t", "checkpoint_ns": ""}
    [payload] = map_debug_tasks([FakeTask({"metadata": md, "tags": ["seq:step:1", "mine"]})])
    assert payload["metadata"] == {"lc_agent_name": "agent", "tags": ["mine"]}
    md["lc_agent_name"] = "changed"
    assert payload["metadata"]["lc_agent_name"] == "agent"
    assert (payload["id"], payload["name"], payload["triggers"]) == ("t1", "tools", ("x",))


def test_no_metadata_key_when_nothing_is_left() -> None:
    for config in (None, {}, {"metadata": {}}, {"metadata": {"langgraph_node": "n"}},
                   {"tags": ["seq:step:2"]}):
        [payload] = map_debug_tasks([FakeTask(config)])
        assert "metadata" not in payload
    assert list(map_debug_tasks([FakeTask({"tags": ["langsmith:hidden"]})])) == []


def test_result_payloads() -> None:
    assert map_task_result_writes([("a", 1), ("b", 2), ("a", 3), ("a", 4)]) == {
        "a": {"$writes": [1, 3, 4]}, "b": 2,
    }
    err = ValueError("x")
    [payload] = map_debug_task_results(
        (FakeTask(None), [("a", 1), ("hidden", 2), ("__error__", err),
                          ("__interrupt__", (Interrupt("q", id="i"),))]),
        ["a"],
    )
    assert payload["result"] == {"a": 1} and payload["error"] is err
    assert payload["interrupts"] == [{"value": "q", "id": "i"}]
