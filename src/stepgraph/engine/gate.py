"""What an async run driven on one worker thread shares with its awaiting caller.

``engine/driver_thread.py`` runs an async run whose work is all sync with the sync driver
on one worker thread. Its caller, on the event loop, may be cancelled at any time; the
``Gate`` makes that cancellation end the run where the async driver would have ended it:

* before a worker thread took the run up, nothing of it runs;
* while the thread runs a step's only task (``enter``..``leave``), the caller stores what
  is left of the run at once (``flush``, the driver's flush-on-error) and gives the thread
  up: the task's result is dropped, as a worker thread's is in the async driver;
* anywhere else (the loop's own work, which never blocks, or a step of several tasks,
  whose running tasks the async driver waits for too) the thread stops at its next
  ``enter`` or ``check`` (``RunStopped``), flushes, and the caller waits for it.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any


class RunStopped(BaseException):  # noqa: N818 - a signal, not an error
    """Raised in the run's thread: its caller was cancelled; the run stops here."""


class RunAbandoned(BaseException):  # noqa: N818
    """Raised in the run's thread: its caller was cancelled and stored what is left."""


class Gate:
    """Where the run's thread is, and whether its caller was cancelled."""

    __slots__ = ("lock", "started", "in_task", "stop", "abandoned", "flush", "run_task")

    def __init__(self, run_task: Callable[[Any], None]) -> None:
        self.run_task = run_task
        """Runs one task to completion (``run_task_sync``, as the async driver sees it)."""
        self.lock = threading.Lock()
        self.started = False
        self.in_task = False
        self.stop = False
        self.abandoned = False
        self.flush: Callable[[], None] | None = None
        """Set by the driver: performs ``loop.finish()`` and waits for the saves."""

    def begin(self) -> bool:
        """The thread takes the run up; ``False`` if its caller was cancelled before."""
        with self.lock:
            self.started = not self.stop
            return self.started

    def enter(self) -> None:
        """The thread is about to run a step's only task (not when cancelled)."""
        with self.lock:
            if self.stop:
                raise RunStopped
            self.in_task = True

    def leave(self) -> None:
        """The task returned; ``RunAbandoned`` if the caller gave the run up meanwhile."""
        with self.lock:
            self.in_task = False
            if self.abandoned:
                raise RunAbandoned

    def run_alone(self, task: Any) -> None:
        """``enter``, ``run_task(task)`` in a copy of the context, ``leave`` (whose
        ``RunAbandoned`` replaces the task's outcome): a step's only task."""
        self.enter()
        try:
            contextvars.copy_context().run(self.run_task, task)
        finally:
            self.leave()  # (a given-up run's RunAbandoned wins over the task's outcome)

    def check(self) -> None:
        """Between steps: ``RunStopped`` once the caller was cancelled."""
        if self.stop:
            raise RunStopped

    def cancel(self) -> bool:
        """The caller was cancelled. ``True``: the run never started, or was stored and given
        up here; ``False``: the thread stops at its next ``enter``/``check`` (wait for it)."""
        with self.lock:
            self.stop = True
            if not self.started:
                return True  # (a worker takes the job up later and drops it)
            if not self.in_task or self.flush is None:
                return False
            self.abandoned = True
            self.flush()  # (the thread waits in ``leave`` meanwhile)
            return True
