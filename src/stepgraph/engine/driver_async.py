"""The async driver: runs a ``RunLoop`` on the event loop, one asyncio task per node task.

It only performs: tasks on asyncio, the loop's effects with ``policy.aperform`` (the saver
and the cache awaited), saves through an ``AsyncWriter`` (``engine/durability.py``:
``durability="async"`` stores in the background here too). A step with one task runs
inline (``policy.run_inline``). Sync nodes hop to a worker thread (``engine/hop.py``); async nodes run
concurrently (an ``ainvoke`` whose work is all sync runs on one worker thread instead,
``drive_to_end``, ``engine/driver_thread.py``). The first
failure cancels the step's other tasks. Stream parts are yielded as soon as they exist.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from stepgraph.engine.delta import aload_history
from stepgraph.engine.driver_thread import drive_on_thread, runs_on_thread
from stepgraph.engine.durability import AsyncWriter
from stepgraph.engine.policy import aperform, eager, run_inline
from stepgraph.engine.runner import run_task_async
from stepgraph.engine.timetravel import aload_saved

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task
    from stepgraph.stream.sink import StreamPart


async def drive_async(loop: RunLoop) -> AsyncIterator[StreamPart]:
    """Run ``loop`` to its end, yielding ``(ns, mode, payload)`` parts.

    A traced run (``loop.tracer``) is reported around it; on an error, what the failing
    step streamed is yielded before the error is raised.
    """
    tracer = loop.tracer
    if tracer is not None:
        await tracer.start_async()
    inner = _drive(loop)
    try:
        async for part in inner:
            yield part
    except BaseException as exc:
        await inner.aclose()  # closed now (the run's last save), not when collected
        if tracer is not None:
            await tracer.end_async(exc)
        if not isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
            for part in loop.sink.drain():
                yield part
        raise
    if tracer is not None:
        await tracer.end_async(None)
    for part in loop.sink.drain():
        yield part


async def drive_to_end(loop: RunLoop, echo: Callable[[StreamPart], Any]) -> None:
    """``ainvoke``: run ``loop`` to its end, ``echo`` seeing every part; on one worker
    thread when nothing in the run needs the event loop (``engine/driver_thread.py``)."""
    if runs_on_thread(loop):
        await drive_on_thread(loop, echo)
        return
    async for part in drive_async(loop):
        echo(part)


async def _drive(loop: RunLoop) -> AsyncIterator[StreamPart]:
    sink = loop.sink
    event = sink.async_waiter()
    saver = loop.checkpointer
    writer = AsyncWriter(loop)
    live = eager(loop)
    try:
        saved = await aload_saved(saver, loop) if saver is not None else None
        loop.restore(
            saved, await aload_history(saver, loop.graph, saved) if saved is not None else None
        )
        await aperform(loop.first(), loop, writer)
        if loop.tracer is not None:
            await loop.tracer.resumed_async()
        for part in sink.drain():
            yield part
        while loop.status == "pending":
            effects = loop.tick()
            if effects:
                await aperform(effects, loop, writer)
            for part in sink.drain():
                yield part
            tasks = loop.runnable
            if tasks is None:
                break
            if tasks:
                if run_inline(loop, tasks, live):
                    await _run_alone(loop, tasks[0], writer)
                else:
                    async with aclosing(_run_step(loop, tasks, event, writer)) as parts:
                        async for part in parts:
                            yield part
            effects = loop.after_tick()
            if effects:
                await aperform(effects, loop, writer)
            for part in sink.drain():
                yield part
    except BaseException:
        # Flush-on-error: what the failed step finished is stored; a saver error here
        # never hides the run's own.
        with contextlib.suppress(Exception):
            await aperform(loop.finish(), loop, writer)
            await writer.wait()
        raise
    await aperform(loop.finish(), loop, writer)
    await writer.wait()


async def _run_alone(loop: RunLoop, task: Task, writer: AsyncWriter) -> None:
    """A step's only task, run inline."""
    try:
        await run_task_async(task)
    except Exception:
        # (A cancelled run did not finish the task: it stays pending.)
        await aperform(loop.task_done(task), loop, writer)
        raise
    effects = loop.task_done(task)
    if effects:
        await aperform(effects, loop, writer)


async def _wait_step(
    event: asyncio.Event, deadline: float | None, pending: dict[Any, Task]
) -> bool:
    """Wait for a task to finish; ``False`` once the step's deadline passed with none done
    (measured from the step's start, so also while the consumer held the stream)."""
    if deadline is None:
        await event.wait()
        return True
    left = deadline - asyncio.get_running_loop().time()
    try:
        await asyncio.wait_for(event.wait(), max(left, 0))
    except TimeoutError:
        return any(f.done() for f in pending)
    return True


async def _run_step(
    loop: RunLoop, tasks: list[Task], event: asyncio.Event, writer: AsyncWriter
) -> AsyncIterator[StreamPart]:
    sink = loop.sink
    step_timeout = loop.graph.step_timeout
    limit = loop.config.get("max_concurrency")
    sem = asyncio.Semaphore(limit) if limit else None

    async def run_one(task: Task) -> Task:
        if sem is None:
            await run_task_async(task)
        else:
            async with sem:
                await run_task_async(task)
        return task

    pending: dict[asyncio.Future[Task], Task] = {}
    for task in tasks:
        fut = asyncio.ensure_future(run_one(task))
        fut.add_done_callback(lambda _f: sink.wake())
        pending[fut] = task
    error: BaseException | None = None
    deadline = asyncio.get_running_loop().time() + step_timeout if step_timeout else None
    try:
        while pending:
            if not await _wait_step(event, deadline, pending):
                error = TimeoutError("Timed out")
                break
            event.clear()
            for fut in [f for f in pending if f.done()]:
                task = pending.pop(fut)
                exc = fut.exception() if not fut.cancelled() else None
                effects = loop.task_done(task)
                if effects:
                    await aperform(effects, loop, writer)
                if exc is not None and error is None:
                    error = exc
            for part in sink.drain():
                yield part
            if error is not None:
                break
    finally:
        if pending:
            # Async siblings are cancelled; sync ones run on threads that cannot be
            # interrupted, so wait for them and keep what they wrote.
            for fut, task in pending.items():
                if task.node.is_async or not task.node.bound:
                    fut.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for fut, task in pending.items():
                if not fut.cancelled() and task.error is None and (task.writes or task.paused):
                    await aperform(loop.task_done(task), loop, writer)
    if error is not None:
        raise error
