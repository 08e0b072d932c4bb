"""The rules both drivers follow, so they cannot drift: inline execution and effects.

A driver (``engine/driver_sync.py``, ``driver_async.py``) only performs: it runs tasks on
threads or asyncio, and performs the effects the loop returns (``engine/effects.py``) in
order, with ``perform``/``aperform`` below. What it decides is decided here:

* ``run_inline``: a step's only task runs in the driver itself (no thread, no asyncio task)
  unless it has a timeout, the graph a step timeout, or the caller reads the step's parts
  while it runs (``live``);
* ``eager``: the stream modes (or ``stream_eager``) whose parts the caller wants while a
  task runs (``custom`` chunks, ``messages`` tokens). An async run is ``live`` when eager;
  a sync run only at the root (``pregel/api.py``): a nested sync run keeps running tasks
  on its own thread, so nested graphs cannot exhaust the shared pool;
* when saves are stored: ``engine/durability.py`` (one policy for both);
* a ``@task`` call (``engine/calls.py``) performs its own cache effects with
  ``perform_call``/``aperform_call``: it runs inside its caller's task, so the sync call
  uses the cache's ``get``/``set`` and the async call awaits ``aget``/``aset``;
* flush-on-error: whatever ends a run (its end, an error, a closed stream, a cancellation),
  the driver performs ``loop.finish()`` and waits for its writer; an error while storing
  then never hides the run's own error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.engine.effects import CacheGet, CacheSet, Emit, Save

if TYPE_CHECKING:
    from stepgraph.engine.durability import AsyncWriter, SyncWriter
    from stepgraph.engine.effects import Effects
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

_EAGER_MODES = frozenset({"custom", "messages"})


def eager(loop: RunLoop) -> bool:
    """The caller wants parts while a task runs (``custom``/``messages`` modes, or the
    graph's ``stream_eager``)."""
    return bool(loop.graph.stream_eager or (_EAGER_MODES & loop.sink.modes))


def run_inline(loop: RunLoop, tasks: list[Task], live: bool) -> bool:
    """Whether a step's tasks run in the driver itself, one after the other: one task,
    no task or step timeout, and no caller waiting for the step's parts as they come."""
    return (
        len(tasks) == 1
        and not live
        and tasks[0].timeout is None
        and loop.graph.step_timeout is None
    )


def _emit(effect: Any, loop: RunLoop) -> None:
    """Hand an ``Emit``'s parts to the run's stream sink (both drivers)."""
    emit = loop.sink.emit
    ns = effect.ns
    for mode, payload in effect.parts:
        emit(ns, mode, payload)


def perform(effects: Effects, loop: RunLoop, writer: SyncWriter) -> None:
    """Perform ``effects`` in order (sync driver)."""
    for effect in effects:
        kind = type(effect)
        if kind is Emit:
            _emit(effect, loop)
        elif kind is Save:
            writer.submit(effect.ops)  # type: ignore[union-attr]
        elif kind is CacheGet:
            get: Any = effect
            more = get.then(get.cache.get(get.keys))
            if more:
                perform(more, loop, writer)
        else:
            effect.cache.set(effect.entries)  # type: ignore[union-attr]


async def aperform(effects: Effects, loop: RunLoop, writer: AsyncWriter) -> None:
    """Perform ``effects`` in order (async driver: the saver and the cache are awaited)."""
    for effect in effects:
        kind = type(effect)
        if kind is Emit:
            _emit(effect, loop)
        elif kind is Save:
            await writer.submit(effect.ops)  # type: ignore[union-attr]
        elif kind is CacheGet:
            get: Any = effect
            more = get.then(await get.cache.aget(get.keys))
            if more:
                await aperform(more, loop, writer)
        else:
            await effect.cache.aset(effect.entries)  # type: ignore[union-attr]


def perform_call(effects: Effects) -> None:
    """Perform a ``@task`` call's cache effects (``CacheGet``, ``CacheSet``) in the calling
    thread. A call streams its parts and queues its writes itself, so it has no other."""
    for effect in effects:
        if type(effect) is CacheGet:
            perform_call(effect.then(effect.cache.get(effect.keys)))
        elif type(effect) is CacheSet:
            effect.cache.set(effect.entries)
        else:
            raise TypeError(f"a task call cannot perform {effect!r}")


async def aperform_call(effects: Effects) -> None:
    """Async twin of ``perform_call``: the cache is awaited."""
    for effect in effects:
        if type(effect) is CacheGet:
            await aperform_call(effect.then(await effect.cache.aget(effect.keys)))
        elif type(effect) is CacheSet:
            await effect.cache.aset(effect.entries)
        else:
            raise TypeError(f"a task call cannot perform {effect!r}")
