"""The run's durability policy, one for both drivers: when a ``Save`` effect is stored.

* ``"sync"``: stored before the run goes on (inline);
* ``"async"``: stored in the background while the next step runs: by one process-wide
  writer thread for sync runs (``SyncWriter``), by one asyncio task per run for async runs
  (``AsyncWriter``); queued saves are grouped into one saver transaction
  (``perform_batch``). A saver with ``inline_writes`` (the in-memory one, whose writes
  cost less than a hand-over) is written inline;
* ``"exit"``: the loop hands over one ``Save`` at the end (``SaveOps.take``), stored inline.

Saves are stored in the order the loop made them. ``wait()`` returns once all are stored
and raises the first saver failure. The drivers call it at the end of a run, also when the
run fails (after handing over what the failed step finished: flush-on-error).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from stepgraph.engine.saving import perform_async, perform_sync

if TYPE_CHECKING:
    import asyncio

    from stepgraph.engine.effects import Op
    from stepgraph.engine.loop import RunLoop


def in_background(loop: RunLoop) -> bool:
    """Whether the run's saves are stored in the background (the same rule for both drivers)."""
    saver = loop.checkpointer
    return (
        loop.durability == "async"
        and saver is not None
        and not getattr(saver, "inline_writes", False)
    )


class SyncWriter:
    """Performs one run's saver calls in order (sync driver).

    In the background (``in_background``) they go to one process-wide writer thread, so
    the next step overlaps the I/O; ``wait()`` (at the end of the run) blocks until all are
    stored and re-raises a saver failure. Otherwise they are stored inline.
    """

    __slots__ = ("saver", "background", "pending", "error", "cv")

    def __init__(self, loop: RunLoop) -> None:
        self.saver = loop.checkpointer
        self.background = in_background(loop)
        self.pending = 0
        self.error: BaseException | None = None
        self.cv = threading.Condition(threading.Lock())

    def submit(self, ops: list[Op]) -> None:
        if not ops:
            return
        if not self.background:
            perform_sync(self.saver, ops)
            return
        if self.error is not None:
            raise self.error
        with self.cv:
            self.pending += 1
        _writer_queue().put((self, ops))

    def wait(self) -> None:
        with self.cv:
            while self.pending:
                self.cv.wait()
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def _run(self, ops: list[Op]) -> None:
        try:
            if self.error is None:
                perform_sync(self.saver, ops)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the run's thread
            self.error = exc
        finally:
            self._done()

    def _done(self) -> None:
        with self.cv:
            self.pending -= 1
            if not self.pending:  # (``wait`` waits for none pending: no wake-up before)
                self.cv.notify_all()


_QUEUE: Any = None
_MAX_BATCH = 64
"""Queued save submissions the writer thread stores in one transaction at most."""


def _perform_group(batch: list[tuple[SyncWriter, list[Op]]]) -> None:
    """Store queued submissions; consecutive ones of one saver go in one transaction when
    it offers ``perform_batch``. A failed group is redone per submission, so each run gets
    its own error."""
    start = 0
    while start < len(batch):
        saver = batch[start][0].saver
        end = start + 1
        while end < len(batch) and batch[end][0].saver is saver:
            end += 1
        group = batch[start:end]
        start = end
        if len(group) > 1 and hasattr(saver, "perform_batch") and all(
            w.error is None for w, _ in group
        ):
            try:
                saver.perform_batch([op for _, ops in group for op in ops])
            except Exception:  # noqa: BLE001 - redone per submission below for the errors
                pass
            else:
                for writer, _ in group:
                    writer._done()
                continue
        for writer, ops in group:
            writer._run(ops)


def _writer_queue() -> Any:
    global _QUEUE
    if _QUEUE is None:
        import queue

        q: queue.SimpleQueue[tuple[SyncWriter, list[Op]]] = queue.SimpleQueue()

        def work() -> None:
            while True:
                batch = [q.get()]
                while len(batch) < _MAX_BATCH:  # group commit: take what else is queued
                    try:
                        batch.append(q.get_nowait())
                    except queue.Empty:
                        break
                _perform_group(batch)

        threading.Thread(target=work, name="stepgraph-saver", daemon=True).start()
        _QUEUE = q
    return _QUEUE


_MAX_QUEUED = 64
"""Saves an async run may queue before it waits for its writer (bounds the memory held)."""


class AsyncWriter:
    """Performs one run's saver calls in order (async driver).

    In the background (``in_background``) one asyncio task of the run stores what is
    queued, everything queued so far in one ``aperform_batch`` call, while the run goes on;
    otherwise ``submit`` awaits the saver.
    """

    __slots__ = ("saver", "background", "queue", "worker", "error")

    def __init__(self, loop: RunLoop) -> None:
        self.saver = loop.checkpointer
        self.background = in_background(loop)
        self.queue: deque[list[Op]] = deque()
        self.worker: asyncio.Task[None] | None = None
        self.error: BaseException | None = None

    async def submit(self, ops: list[Op]) -> None:
        if not ops:
            return
        if not self.background:
            await perform_async(self.saver, ops)
            return
        if self.error is not None:
            raise self.error
        import asyncio  # not at import time: sync-only programs never load asyncio

        self.queue.append(ops)
        if self.worker is None or self.worker.done():
            self.worker = asyncio.ensure_future(self._work())
        elif len(self.queue) > _MAX_QUEUED:
            await asyncio.shield(self.worker)

    async def _work(self) -> None:
        queue = self.queue
        while queue:
            batch: list[Op] = []
            while queue:
                batch.extend(queue.popleft())
            try:
                await perform_async(self.saver, batch)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the run's task
                self.error = exc
                queue.clear()
                return

    async def wait(self) -> None:
        worker = self.worker
        if worker is not None:
            import asyncio

            # Shielded: a run cancelled while it waits still stores what it handed over.
            await asyncio.shield(worker)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
