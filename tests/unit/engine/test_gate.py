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
