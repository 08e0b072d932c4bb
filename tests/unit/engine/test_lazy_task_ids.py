"""Task ids of a run without a checkpointer are hashed only when read, and are the same ids
an eager plan makes (``planner.plan_tasks(by_id=False)``, ``Task.id``)."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine import loop as loop_module
from stepgraph.engine import tasks as tasks_module
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import get_runtime
from stepgraph.types import Send


class State(TypedDict):
    n: int
    seen: Annotated[list[str], operator.add]


def _fan_out(state: State) -> list[Send]:
    return [Send("work", {"n": i, "seen": []}) for i in range(3)]


def _graph(record_ids: bool) -> StateGraph:
    def start(state: State) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    def work(state: State) -> dict[str, Any]:
        seen = [get_runtime().execution_info.task_id] if record_ids else []
        return {"seen": seen}

    builder = StateGraph(State)
    builder.add_node("start", start)
    builder.add_node("work", work)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", _fan_out, ["work"])
    builder.add_edge("work", END)
    return builder


@pytest.fixture
def fixed_checkpoint_ids(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Checkpoint ids from a counter (put back to 0 by ``restart[0]()``)."""
    counter = [itertools.count()]

    def restart() -> None:
        counter[0] = itertools.count()

    monkeypatch.setattr(
        loop_module, "new_checkpoint_id", lambda step: f"ckpt-{next(counter[0]):04d}"
    )
    return [restart]


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every id ``Task.id`` hashes on first read."""
    made: list[tuple[Any, ...]] = []
    real = tasks_module.task_id

    def counting(*parts: Any) -> str:
        made.append(parts)
        return real(*parts)

    monkeypatch.setattr(tasks_module, "task_id", counting)
    return made


def test_a_run_that_reads_no_id_hashes_none(hashed: list[tuple[Any, ...]]) -> None:
    out = _graph(record_ids=False).compile().invoke({"n": 0, "seen": []})
    assert out == {"n": 1, "seen": []}
    assert hashed == []


def test_ids_read_without_a_checkpointer_are_the_checkpointed_runs_ids(
    fixed_checkpoint_ids: list[Any], hashed: list[tuple[Any, ...]]
) -> None:
    plain = _graph(record_ids=True).compile()
    without = list(plain.stream({"n": 0, "seen": []}, stream_mode=["tasks", "values"]))
    assert len(hashed) == 4  # start and three Sends, each hashed once though read twice
    fixed_checkpoint_ids[0]()
    saved = _graph(record_ids=True).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    with_saver = list(saved.stream({"n": 0, "seen": []}, config, stream_mode=["tasks", "values"]))

    def task_ids(parts: list[tuple[str, Any]]) -> list[str]:
        return [p["id"] for mode, p in parts if mode == "tasks" and "input" in p]

    assert task_ids(without) == task_ids(with_saver)
    ids = task_ids(without)
    assert len(set(ids)) == 4
    final = [p for mode, p in without if mode == "values"][-1]
    # the node reads the same id as the stream reports (the Sends' three ids)
    assert sorted(final["seen"]) == sorted(ids[1:])
    assert final == [p for mode, p in with_saver if mode == "values"][-1]
