"""``engine.workers``: the long-lived helper threads of the sync driver's parallel steps."""

from __future__ import annotations

import os
import threading

import pytest

from stepgraph.engine.workers import Crew


def test_jobs_run_on_named_worker_threads() -> None:
    crew = Crew("test-crew")
    names: list[str] = []
    done = threading.Event()

    def job() -> None:
        names.append(threading.current_thread().name)
        done.set()

    crew.start(job)
    assert done.wait(5)
    crew.stop()
    assert names == ["test-crew-0"]


def test_a_free_worker_is_reused() -> None:
    crew = Crew("test-crew")
    for _ in range(20):
        done = threading.Event()
        crew.start(done.set)
        assert done.wait(5)
        # the worker counts itself free just after the job returns
        for _ in range(500):
            with crew._lock:
                if crew._free:
                    break
            threading.Event().wait(0.001)
    assert len(crew._threads) == 1
    crew.stop()


def test_jobs_beyond_the_thread_limit_wait_for_a_free_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STEPGRAPH_MAX_THREADS", "2")
    crew = Crew("test-crew")
    gate = threading.Event()
    running: list[int] = []
    finished = threading.Semaphore(0)
    lock = threading.Lock()
    peak = [0]

    def job() -> None:
        with lock:
            running.append(1)
            peak[0] = max(peak[0], len(running))
        gate.wait(5)
        with lock:
            running.pop()
        finished.release()

    for _ in range(5):
        crew.start(job)
    assert len(crew._threads) == 2
    gate.set()
    for _ in range(5):
        assert finished.acquire(timeout=5)
    assert peak[0] == 2
    # every queued job was taken: the two workers are free again, nothing is left over
    for _ in range(500):
        with crew._lock:
            if crew._free == 2:
                break
        threading.Event().wait(0.001)
    assert (crew._free, crew._backlog) == (2, 0)
    crew.stop()
    assert not any(t.is_alive() for t in crew._threads)


def test_an_escaping_error_is_reported_and_the_worker_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[type[BaseException] | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_type))
    crew = Crew("test-crew")
    done = threading.Event()

    def fail() -> None:
        raise KeyError("boom")

    crew.start(fail)
    crew.start(done.set)
    assert done.wait(5)
    crew.stop()
    assert seen == [KeyError]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_without_workers() -> None:
    from stepgraph.engine.workers import step_crew

    done = threading.Event()
    step_crew.start(done.set)
    assert done.wait(5)
    pid = os.fork()
    if pid == 0:  # the child: no workers, and a job still runs
        ok = not step_crew._threads
        ran = threading.Event()
        step_crew.start(ran.set)
        os._exit(0 if ok and ran.wait(5) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _settle(crew: Crew, free: int, backlog: int = 0) -> None:
    for _ in range(2000):
        with crew._lock:
            if (crew._free, crew._backlog) == (free, backlog):
                return
        threading.Event().wait(0.001)
    raise AssertionError(f"crew never reached free={free}, backlog={backlog}")


def _busy_crew() -> tuple[Crew, threading.Event]:
    """A crew whose first worker is busy until the returned event is set."""
    crew = Crew("test-crew")
    release = threading.Event()
    started = threading.Event()

    def hold() -> None:
        started.set()
        release.wait(5)

    crew.start(hold)
    assert started.wait(5)
    return crew, release


def test_a_revoked_job_never_runs_and_its_worker_is_free_at_once() -> None:
    crew, blocker = _busy_crew()
    ran: list[str] = []
    # the only worker is busy and may start more: a second job gets a new thread
    ticket = crew.start(lambda: ran.append("revoked"))
    # (the new thread may already have taken it: then revoking does nothing)
    if crew.revoke(ticket):
        assert crew.revoke(ticket) is False  # once only
    blocker.set()
    _settle(crew, 2)
    done = threading.Event()
    crew.start(done.set)  # a free worker takes it; no third thread
    assert done.wait(5)
    _settle(crew, 2)
    assert len(crew._threads) == 2
    assert ran in ([], ["revoked"])
    crew.stop()


def test_a_taken_job_cannot_be_revoked() -> None:
    crew = Crew("test-crew")
    done = threading.Event()
    ticket = crew.start(done.set)
    assert done.wait(5)
    assert crew.revoke(ticket) is False
    _settle(crew, 1)
    crew.stop()


def test_revoking_backlog_jobs_keeps_the_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEPGRAPH_MAX_THREADS", "1")
    crew, gate = _busy_crew()
    ran: list[int] = []
    backlog = [crew.start(lambda i=i: ran.append(i)) for i in range(3)]
    assert crew._backlog == 3
    assert crew.revoke(backlog[0]) and crew.revoke(backlog[2])
    assert crew._backlog == 1
    gate.set()
    _settle(crew, 1)
    assert ran == [1]
    crew.stop()


def test_a_backlog_job_revoked_after_a_worker_claimed_it_frees_that_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STEPGRAPH_MAX_THREADS", "1")
    crew = Crew("test-crew")
    gate = threading.Event()
    started = threading.Event()

    def hold() -> None:
        started.set()
        gate.wait(5)

    crew.start(hold)
    assert started.wait(5)
    ticket = crew.start(lambda: None)
    # what a finishing worker does first: it claims the backlog job (not free yet)
    with crew._lock:
        crew._backlog -= 1
        claimed = True
    assert claimed and crew._backlog == 0
    assert crew.revoke(ticket)
    assert (crew._free, crew._backlog) == (1, 0)
    with crew._lock:  # (undo the simulated claim: the worker will count itself free)
        crew._free -= 1
    gate.set()
    _settle(crew, 1)
    crew.stop()
