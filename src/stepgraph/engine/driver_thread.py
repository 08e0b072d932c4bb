"""``ainvoke`` of a run whose work is all sync: the sync driver on one worker thread.

In an async run every sync node body hops to a worker thread and back (``engine/hop.py``),
which costs more CPU than a small node itself. When nothing in a run needs the event
loop (``runs_on_thread``: sync nodes, routers and error handlers, no node or step timeout,
no tracer, no parts wanted while a task runs, and no saver or cache, or ones whose async
methods only call their sync ones, such as ``InMemorySaver`` and ``InMemoryCache``),
``ainvoke`` hands the whole run to one worker thread instead, which runs it with the sync
driver: one hop per run. What the
run does is the same: its user code ran on worker threads before too, each task still
runs in a fresh copy of the caller's context, and the saver and stream sink see the same
calls and parts in the same order.

A cancelled caller ends the run where the async driver would (``engine/gate.py``): a
task that is running finishes on its thread and its result is dropped, and what the run
finished is stored before ``CancelledError`` reaches the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepgraph.engine.callable import NodeFunction
from stepgraph.engine.driver_sync import drive_sync
from stepgraph.engine.gate import Gate, RunAbandoned, RunStopped
from stepgraph.engine.hop import hop_future
from stepgraph.engine.policy import eager
from stepgraph.engine.runner import node_cancelled, run_task_sync

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task
    from stepgraph.stream.sink import StreamPart

_CACHE_ASYNC = ("aget", "aset")
"""The cache methods an async run calls."""

_SAVER_ASYNC = (
    "aget_tuple",
    "alist",
    "aput",
    "aput_writes",
    "aget_delta_channel_history",
    "aperform_batch",
)
"""The saver methods an async run calls, which must be the sync ones run inline."""


@functools.lru_cache(maxsize=64)
def _calls_sync(cls: type, methods: tuple[str, ...]) -> bool:
    """A saver or cache class whose async ``methods`` are those of a class declaring
    ``async_calls_sync = True`` (they only call its sync methods, inline)."""
    base = next((c for c in cls.__mro__ if c.__dict__.get("async_calls_sync") is True), None)
    if base is None:
        return False
    return all(getattr(cls, name, None) is getattr(base, name, None) for name in methods)


def _all_sync(nodes: Any) -> bool:
    """Every node's bodies, writers and error handler are sync, and none has a timeout."""
    for node in nodes:
        if node.is_async or node.timeout is not None:
            return False
        for step in node.bound:
            if step.is_async or not isinstance(step, NodeFunction):
                return False
        handler = node.error_handler
        if handler is not None and (
            handler[0].is_async or handler[1].is_async or not isinstance(handler[0], NodeFunction)
        ):
            return False
    return True


def _graph_all_sync(loop: RunLoop) -> bool:
    """``_all_sync`` of the run's nodes (~0.3 ms for 1000 nodes), remembered on the graph
    and checked again whenever its nodes are not the same objects as last time (a node's
    bodies are fixed once it is built, as its ``is_async`` is). On the graph, not in a
    weak mapping: a node that refers to its own graph would keep such an entry alive."""
    nodes = tuple(loop.nodes.values())
    graph = loop.graph
    made = getattr(graph, "_sync_nodes", None)
    if made is not None and made[0] == nodes:  # (identity: nodes define no ``__eq__``)
        return bool(made[1])
    result = _all_sync(nodes)
    with contextlib.suppress(AttributeError):  # (a graph without attributes: every run)
        graph._sync_nodes = (nodes, result)
    return result


def runs_on_thread(loop: RunLoop) -> bool:
    """Whether ``loop`` (an ``ainvoke``) does the same on one worker thread."""
    graph = loop.graph
    saver = loop.checkpointer
    return (
        loop.tracer is None
        and graph.step_timeout is None
        and (saver is None or _calls_sync(type(saver), _SAVER_ASYNC))
        and (graph.cache is None or _calls_sync(type(graph.cache), _CACHE_ASYNC))
        and not eager(loop)
        and _graph_all_sync(loop)
    )


def _run_task(task: Task) -> None:
    """``run_task_sync``; a ``CancelledError`` the task raised itself is its
    ``NodeCancelledError``, as in the async driver (``runner.run_task_async``)."""
    try:
        run_task_sync(task)
    except asyncio.CancelledError:
        raise node_cancelled(task) from None


def _job(loop: RunLoop, gate: Gate, echo: Callable[[StreamPart], Any]) -> None:
    if not gate.begin():
        return
    try:
        for part in drive_sync(loop, gate=gate):
            echo(part)
    except (RunStopped, RunAbandoned):
        pass  # the caller was cancelled (and raises that)


async def drive_on_thread(loop: RunLoop, echo: Callable[[StreamPart], Any]) -> None:
    """Run ``loop`` to its end on a worker thread, ``echo`` seeing every part there."""
    gate = Gate(_run_task)
    job = hop_future(_job, loop, gate, echo)
    try:
        await asyncio.shield(job)
    except asyncio.CancelledError:
        if job.done():
            if not job.cancelled():
                job.exception()  # (retrieved: the cancellation is what the caller sees)
            raise
        if not gate.cancel():
            try:  # the thread stores what the run finished, then stops
                await job
            except BaseException:  # noqa: BLE001, S110 - the cancellation is what matters
                pass
        raise
