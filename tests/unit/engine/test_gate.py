"""``engine.gate``: where a cancelled ``ainvoke`` run on one worker thread stops."""

from __future__ import annotations

from typing import Any

import pytest

from stepgraph.engine.gate import Gate, RunAbandoned, RunStopped


def _run(task: Any) -> None:
    pass


def test_a_run_cancelled_before_its_thread_took_it_never_starts() -> None:
    gate = Gate(_run)
    assert gate.cancel() is True  # nothing to wait for
    assert gate.begin() is False


def test_cancelled_while_a_task_runs_the_caller_flushes_and_the_thread_gives_up() -> None:
    flushed: list[str] = []
    gate = Gate(_run)
    gate.flush = lambda: flushed.append("flush")
    assert gate.begin()
    gate.enter()
    assert gate.cancel() is True
    assert flushed == ["flush"]
    with pytest.raises(RunAbandoned):
        gate.leave()


def test_cancelled_between_tasks_the_thread_stops_at_its_next_task_or_step() -> None:
    flushed: list[str] = []
    gate = Gate(_run)
    gate.flush = lambda: flushed.append("flush")
    assert gate.begin()
    gate.enter()
    gate.leave()
    gate.check()  # not cancelled: goes on
    assert gate.cancel() is False  # the thread flushes, the caller waits for it
    assert flushed == []
    with pytest.raises(RunStopped):
        gate.check()
    with pytest.raises(RunStopped):
        gate.enter()


def test_run_alone_runs_the_task_in_a_copy_of_the_context_between_enter_and_leave() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("gate_var", default="unset")
    seen: list[Any] = []

    def run(task: Any) -> None:
        seen.append((task, gate.in_task))
        var.set("set by the task")

    gate = Gate(run)
    assert gate.begin()
    gate.run_alone("t")
    assert seen == [("t", True)]
    assert gate.in_task is False
    assert var.get() == "unset"  # the task's context was a copy


def test_run_alone_when_cancelled_before_does_not_run_and_when_during_is_abandoned() -> None:
    ran: list[Any] = []
    gate = Gate(ran.append)
    gate.flush = lambda: None
    assert gate.begin()
    gate.cancel()
    with pytest.raises(RunStopped):
        gate.run_alone("t")
    assert ran == []

    def cancelled_meanwhile(task: Any) -> None:
        assert late.cancel() is True  # the caller flushes while the task runs
        raise ValueError("the task's own error is dropped")

    late = Gate(cancelled_meanwhile)
    late.flush = lambda: None
    assert late.begin()
    with pytest.raises(RunAbandoned):
        late.run_alone("t")
    assert late.in_task is False
