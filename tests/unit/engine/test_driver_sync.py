"""``engine.driver_sync``: a step of several sync tasks (threads, context, concurrency)."""

from __future__ import annotations

import contextvars
import operator
import threading
import time
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.types import Send

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("driver_sync_test_var", default="unset")


class S(TypedDict):
    out: Annotated[list, operator.add]


def _fanout(node, n: int):
    g = StateGraph(S)
    g.add_node("work", node)
    g.add_conditional_edges(START, lambda s: [Send("work", {"out": [i]}) for i in range(n)])
    return g.compile()


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_each_task_runs_in_a_copy_of_the_callers_context(mode: str) -> None:
    def node(s: S) -> dict:
        seen = VAR.get()
        VAR.set(f"task {s['out'][0]}")  # stays in this task's copy
        time.sleep(0.01)
        return {"out": [(seen, VAR.get())]}

    app = _fanout(node, 6)
    token = VAR.set("caller")
    try:
        if mode == "invoke":
            out = app.invoke({"out": []})["out"]
        else:
            out = [c for c in app.stream({"out": []}, stream_mode="values")][-1]["out"]
        assert VAR.get() == "caller"
    finally:
        VAR.reset(token)
    assert sorted(out) == [("caller", f"task {i}") for i in range(6)]


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_blocking_tasks_all_run_at_once(mode: str) -> None:
    n = 4  # (LangGraph's default executor runs as few as 5 threads)
    barrier = threading.Barrier(n, timeout=10)

    def node(s: S) -> dict:
        barrier.wait()  # only passes when all n tasks run at the same time
        return {"out": s["out"]}

    app = _fanout(node, n)
    if mode == "invoke":
        out = app.invoke({"out": []})["out"]
    else:
        out = [c for c in app.stream({"out": []}, stream_mode="values")][-1]["out"]
    assert sorted(out) == list(range(n))


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_max_concurrency_bounds_the_tasks_running_at_once(limit: int) -> None:
    lock = threading.Lock()
    running: list[int] = []
    peak = [0]

    def node(s: S) -> dict:
        with lock:
            running.append(1)
            peak[0] = max(peak[0], len(running))
        time.sleep(0.02)
        with lock:
            running.pop()
        return {"out": s["out"]}

    out = _fanout(node, 9).invoke({"out": []}, {"max_concurrency": limit})["out"]
    assert sorted(out) == list(range(9))
    assert 1 <= peak[0] <= limit


def test_a_failing_task_lets_its_siblings_finish() -> None:
    finished: list[int] = []

    def node(s: S) -> dict:
        i = s["out"][0]
        if i == 0:
            raise ValueError("task 0 failed")
        time.sleep(0.01)
        finished.append(i)
        return {"out": [i]}

    with pytest.raises(ValueError, match="task 0 failed"):
        _fanout(node, 5).invoke({"out": []})
    assert sorted(finished) == [1, 2, 3, 4]


def test_quick_tasks_of_a_step_stream_their_updates_in_task_order() -> None:
    """Each new helper takes the earlier task, so quick tasks start (and finish) in order, as
    when each is submitted to a pool in turn: `a`'s update streams before `b`'s."""
    g = StateGraph(S)
    g.add_node("a", lambda s: {"out": ["a"]})
    g.add_node("b", lambda s: {"out": ["b"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile()
    for _ in range(20):
        assert [next(iter(u)) for u in app.stream({"out": []}, stream_mode="updates")] == ["a", "b"]
