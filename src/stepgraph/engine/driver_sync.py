"""The sync driver: runs a ``RunLoop`` with threads, yielding stream parts as they come.

It only performs: tasks on threads, the loop's effects with ``policy.perform``, saves
through a ``SyncWriter`` (``engine/durability.py``). A step with one task runs inline
(``policy.run_inline``). Several tasks run on helper threads (``engine/workers.py``) while
the calling thread runs tasks too ("caller runs"), so nested graphs never deadlock on a full
set of helpers.
When the caller is a live stream consumer it only waits and yields.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

from stepgraph.engine.delta import load_history
from stepgraph.engine.durability import SyncWriter
from stepgraph.engine.gate import RunAbandoned, RunStopped
from stepgraph.engine.policy import perform, run_inline
from stepgraph.engine.runner import run_task_sync
from stepgraph.engine.timetravel import load_saved
from stepgraph.engine.workers import Ticket, step_crew

if TYPE_CHECKING:
    from stepgraph.engine.gate import Gate
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task
    from stepgraph.stream.sink import StreamPart


def drive_sync(
    loop: RunLoop, *, live: bool = False, streaming: bool = False, gate: Gate | None = None
) -> Iterator[StreamPart]:
    """Run ``loop`` to its end, yielding ``(ns, mode, payload)`` parts.

    ``streaming``: a stream consumer waits for the parts of a step with several tasks
    instead of running one of them, so each task's update is yielded when it finishes.
    ``gate``: the run is an async run driven on a worker thread (``engine/driver_thread.py``),
    which its awaiting caller may cancel.
    A traced run (``loop.tracer``) is reported around it; on an error, what the failing
    step streamed is yielded before the error is raised.
    """
    tracer = loop.tracer
    if tracer is not None:
        tracer.start_sync()
    try:
        yield from _drive(loop, live, streaming, gate)
    except BaseException as exc:
        if tracer is not None:
            tracer.end_sync(exc)
        if not isinstance(exc, (GeneratorExit, RunStopped, RunAbandoned)):  # (not when cancelled)
            yield from loop.sink.drain()
        raise
    if tracer is not None:
        tracer.end_sync(None)
    yield from loop.sink.drain()


def _drive(
    loop: RunLoop, live: bool, streaming: bool = False, gate: Gate | None = None
) -> Iterator[StreamPart]:
    sink = loop.sink
    parts = sink.parts  # (looked at before draining: most steps stream nothing mid-step)
    saver = loop.checkpointer
    writer = SyncWriter(loop)
    if gate is not None:
        gate.flush = lambda: _flush(loop, writer)
    try:
        saved = load_saved(saver, loop) if saver is not None else None
        loop.restore(saved, load_history(saver, loop.graph, saved) if saved is not None else None)
        perform(loop.first(), loop, writer)
        if loop.tracer is not None:
            loop.tracer.resumed_sync()
        yield from sink.drain()
        while loop.status == "pending":
            effects = loop.tick()
            if effects:
                perform(effects, loop, writer)
            if parts:
                yield from sink.drain()
            tasks = loop.runnable
            if tasks is None:
                break
            if tasks:
                if run_inline(loop, tasks, live):
                    _run_alone(loop, tasks[0], writer, gate)
                else:
                    yield from _run_step(loop, tasks, live, writer, streaming, gate)
                    if gate is not None:
                        gate.check()
            effects = loop.after_tick()
            if effects:
                perform(effects, loop, writer)
            if parts:
                yield from sink.drain()
    except RunAbandoned:
        raise  # its canceller stored what is left (``Gate.cancel``)
    except BaseException:
        # Flush-on-error: what the failed step finished is stored; a saver error here
        # never hides the run's own.
        _flush(loop, writer)
        raise
    perform(loop.finish(), loop, writer)
    writer.wait()


def _flush(loop: RunLoop, writer: SyncWriter) -> None:
    with contextlib.suppress(Exception):
        perform(loop.finish(), loop, writer)
        writer.wait()


def _run_alone(loop: RunLoop, task: Task, writer: SyncWriter, gate: Gate | None = None) -> None:
    """A step's only task, run inline."""
    if gate is not None:
        return _run_gated(loop, task, writer, gate)
    try:
        run_task_sync(task)
    except Exception:
        # (A run stopped by KeyboardInterrupt did not finish the task: it stays pending.)
        perform(loop.task_done(task), loop, writer)
        raise
    effects = loop.task_done(task)
    if effects:
        perform(effects, loop, writer)


def _run_gated(loop: RunLoop, task: Task, writer: SyncWriter, gate: Gate) -> None:
    """``_run_alone`` in a cancellable run: a cancelled run does not start the task; one
    cancelled while the task runs is given up here (``RunAbandoned``)."""
    try:
        gate.run_alone(task)
    except Exception:
        perform(loop.task_done(task), loop, writer)
        raise
    effects = loop.task_done(task)
    if effects:
        perform(effects, loop, writer)


def _revoke(tickets: list[Ticket]) -> None:
    """Every task of the step is done: a helper job no worker has taken yet would find
    nothing to do. Revoked, its worker counts as free at once (not only once it gets the
    GIL), so the next step of several tasks reuses it instead of starting another thread."""
    for ticket in tickets:
        step_crew.revoke(ticket)


def _run_step(
    loop: RunLoop,
    tasks: list[Task],
    live: bool,
    writer: SyncWriter,
    streaming: bool = False,
    gate: Gate | None = None,
) -> Iterator[StreamPart]:
    """Run a step's tasks in parallel, each in its own copy of the caller's context (as
    LangGraph's executor does), handing each finished one to ``loop.task_done``.

    Helpers (``workers.step_crew``) join one at a time: the caller starts one, and each
    helper starts the next as it takes its first task while tasks are left, up to
    ``max_concurrency`` threads (the caller counting as one when it runs tasks too). Tasks
    that block are soon all running; tasks that return at once are mostly done by the
    threads already running instead of by new ones.
    """
    step_timeout = loop.graph.step_timeout
    run = run_task_sync if gate is None else gate.run_task
    copy_context = contextvars.copy_context
    queue: deque[tuple[Task, contextvars.Context]] = deque([(t, copy_context()) for t in tasks])
    done: deque[Task] = deque()
    failed: list[BaseException] = []
    lock = threading.Lock()
    sink = loop.sink
    event = sink.sync_waiter()  # (before a task starts: every later part or wake-up sets it)
    limit = loop.config.get("max_concurrency") or len(tasks)
    # Under a step timeout the caller only waits: it must be free to give up on time.
    caller_runs = not live and not streaming and step_timeout is None
    deadline = time.monotonic() + step_timeout if step_timeout else None
    spare = min(len(tasks), limit) - (1 if caller_runs else 0)  # helpers still to start
    tickets: list[Ticket] = []  # the helpers' jobs (``list.append`` is atomic)
    start = step_crew.start

    def work(helper: bool, wake: bool) -> None:
        # (the caller looks at ``done`` when it returns: only helpers wake it)
        nonlocal spare
        while True:
            with lock:
                more = helper and spare > 0 and len(queue) > 1
                if more:
                    spare -= 1
            if more:
                # The next helper is started before this one takes a task, so it takes the
                # earlier one: tasks start in their order (a step of quick tasks streams its
                # updates in task order, as when each was submitted to a pool in turn).
                tickets.append(start(join))
                helper = False
            with lock:
                if not queue:
                    return
                task, ctx = queue.popleft()
            try:
                ctx.run(run, task)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the driver
                with lock:
                    failed.append(exc)
            done.append(task)
            if wake:
                sink.wake()

    def join() -> None:
        work(True, True)

    if spare > 0:
        spare -= 1
        tickets.append(start(join))
    if caller_runs:
        work(False, False)
    finished = 0
    while True:
        while done:
            effects = loop.task_done(done.popleft())
            if effects:
                perform(effects, loop, writer)
            finished += 1
        yield from sink.drain()
        with lock:
            # Threads cannot be cancelled: as in LangGraph, every task of the step runs and
            # what finished is kept (saved as pending writes) before the error is raised.
            if finished == len(tasks) and not done:
                break
        if deadline is None:
            event.wait()
        elif not event.wait(max(deadline - time.monotonic(), 0)) and not done:
            # Threads cannot be cancelled: the tasks still running are abandoned and
            # what they write is never applied; tasks not started yet never start.
            with lock:
                queue.clear()
            raise TimeoutError("Timed out")
        event.clear()
    _revoke(tickets)
    if failed:
        raise failed[0]
