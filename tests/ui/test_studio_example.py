"""``examples/studio.py`` (the graph the studio's browser tests drive), run in process."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.types import Command

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import studio as example  # noqa: E402


def test_chat_fan_out_interrupt_resume_answer() -> None:
    graph = example.builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    tokens: list[str] = []
    tasks: list[str] = []
    for mode, chunk in graph.stream({"messages": [{"type": "human", "content": "owls"}]}, config,
                                    stream_mode=["messages", "tasks"]):
        if mode == "messages":
            tokens.append(chunk[0].content if hasattr(chunk[0], "content") else chunk[0]["content"])
        elif "input" in chunk:
            tasks.append(chunk["name"])
    assert "".join(tokens) == "Let me look into owls." and len(tokens) > 1
    assert tasks == ["chat", "research", "research", "research", "review"]  # review waits
    state = graph.get_state(config)
    assert state.next == ("review",)
    value = state.tasks[0].interrupts[0].value
    assert value["schema"] == example.REVIEW_SCHEMA and len(value["notes"]) == 6
    custom: list[Any] = []
    for mode, chunk in graph.stream(Command(resume={"approved": True, "comment": "ok"}), config,
                                    stream_mode=["custom", "values"]):
        if mode == "custom":
            custom.append(chunk)
    final = graph.get_state(config).values
    assert final["approved"] is True and final["comment"] == "ok"
    assert final["messages"][-1].content == "Summary of owls: 6 notes approved."
    assert [c["progress"] for c in custom] == ["summarizing", "done"]
