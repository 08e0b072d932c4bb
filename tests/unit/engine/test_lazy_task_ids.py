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
from stepgraph.engine import planner as planner_module
from stepgraph.engine import tasks as tasks_module
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import get_runtime
from stepgraph.types import Command, Send, interrupt


class State(TypedDict):
    n: int
    seen: Annotated[list[str], operator.add]


def _fan_out(state: State) -> list[Send]:
    return [Send("work", {"n": i, "seen": []}) for i in range(3)]


def _graph(record_ids: bool) -> StateGraph:
    def work(state: State) -> dict[str, Any]:
        seen = [get_runtime().execution_info.task_id] if record_ids else []
        return {"seen": seen}

    return _fanning_out_to(work)


def _fanning_out_to(work: Any) -> StateGraph:
    """``start`` increments ``n``, then three Sends to ``work``."""

    def start(state: State) -> dict[str, Any]:
        return {"n": state["n"] + 1}

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
    """Every task id hashed: by ``Task.id`` on first read, or by an eager plan."""
    made: list[tuple[Any, ...]] = []
    real = tasks_module.task_id

    def counting(*parts: Any) -> str:
        made.append(parts)
        return real(*parts)

    monkeypatch.setattr(tasks_module, "task_id", counting)
    monkeypatch.setattr(planner_module, "make_task_id", counting)  # (an eager plan's ids)
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


def test_an_exit_durability_run_that_finishes_hashes_no_id(hashed: list[tuple[Any, ...]]) -> None:
    saved = _graph(record_ids=False).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = saved.invoke({"n": 0, "seen": []}, config, durability="exit")
    assert out == {"n": 1, "seen": []}
    assert hashed == []  # only the last checkpoint is stored, with no task writes after it
    assert saved.get_state(config).values == out


def _interrupting() -> StateGraph:
    def work(state: State) -> dict[str, Any]:
        answer = interrupt(f"work {state['n']}?")
        return {"seen": [f"{state['n']}:{answer}"]}

    return _fanning_out_to(work)


@pytest.mark.parametrize("durability", ["exit", "sync"])
def test_writes_stored_at_exit_carry_the_ids_a_resume_plans(
    durability: str, fixed_checkpoint_ids: list[Any]
) -> None:
    """An interrupted step's writes (stored only at the end under ``exit``) are stored under
    the ids of its tasks, the same as under ``sync``, and a resume matches them."""
    saver = InMemorySaver()
    graph = _interrupting().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0, "seen": []}, config, durability=durability)  # type: ignore[arg-type]
    state = graph.get_state(config)
    interrupts = {i.id: i.value for t in state.tasks for i in t.interrupts}
    assert sorted(interrupts.values()) == ["work 0?", "work 1?", "work 2?"]
    stored = saver.get_tuple(config)
    assert stored is not None
    stored_ids = {task_id for task_id, _, _ in stored.pending_writes}
    assert stored_ids == {t.id for t in state.tasks}
    resume = {iid: value.split()[1].rstrip("?") for iid, value in interrupts.items()}
    out = graph.invoke(Command(resume=resume), config, durability=durability)  # type: ignore[arg-type]
    assert sorted(out["seen"]) == ["0:0", "1:1", "2:2"]
