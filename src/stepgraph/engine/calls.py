"""Functional-API task calls: a ``@task`` called inside a running node becomes a sub-task.

Each call gets a deterministic id from its caller's id and its call index, runs on the
shared pool (sync) or the event loop (async), and stores its result as a ``__return__``
write, so a resumed caller that replays its calls gets stored results instead of running
finished tasks again.

A call with a ``CachePolicy`` looks its result up first and remembers it after, through
the cache effects of ``engine/caching.py`` that the call performs itself
(``policy.perform_call``; an async call awaits ``aget``/``aset``, and a sync call made on
a running event loop looks up in its worker thread, so the event loop never blocks).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from stepgraph._running import current_task, reset_current_task, set_current_task
from stepgraph.constants import INTERRUPT, PUSH, RESUME, RETURN
from stepgraph.engine.caching import call_entry, call_lookup
from stepgraph.engine.ids import task_id as make_task_id
from stepgraph.engine.policy import aperform_call, perform_call
from stepgraph.engine.pool import submit
from stepgraph.engine.retry import retry_delay
from stepgraph.engine.runner import with_timeout_async
from stepgraph.engine.tasks import Task
from stepgraph.engine.timeout_support import sync_timeout_error
from stepgraph.engine.tracing import ChildRun, call_inputs, call_run
from stepgraph.errors import GraphInterrupt
from stepgraph.stream import events

if TYPE_CHECKING:
    from stepgraph.engine.node import PregelNode

Traced = tuple[ChildRun, Any] | None
"""A traced call's run and its caller's config (``None`` when the run is not traced)."""


class SyncFuture(Future):  # type: ignore[type-arg]
    """A sync task call's future; ``result()`` runs the call inline if no worker took it yet,
    and async code may ``await`` it."""

    def __init__(self, run: Any) -> None:
        super().__init__()
        self._run = run
        self._claim = threading.Lock()
        self._claimed = False

    def claim_and_run(self) -> None:
        with self._claim:
            if self._claimed:
                return
            self._claimed = True
        try:
            self.set_result(self._run())
        except BaseException as exc:  # noqa: BLE001 - delivered through the future
            self.set_exception(exc)

    def result(self, timeout: float | None = None) -> Any:
        self.claim_and_run()
        return super().result(timeout)

    def __await__(self) -> Any:
        """Async code awaits a sync task's call without blocking its event loop."""
        if not self.done():
            yield from asyncio.wrap_future(self).__await__()
        return super().result()


def _saved(loop: Any, tid: str) -> tuple[bool, Any, list[Any]]:
    done, value, resume = False, None, []
    for t, chan, v in loop.pending_writes:
        if t != tid:
            continue
        if chan == RETURN:
            done, value = True, v
        elif chan == RESUME:
            resume = list(v)
    return done, value, resume


def call_task(node: PregelNode, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Schedule a call of ``node`` from the running task; returns a future."""
    parent = current_task()
    if parent is None:
        raise RuntimeError("Called get_config outside of a runnable context")
    loop = parent.run
    idx = parent.call_counter
    parent.call_counter += 1
    tid = make_task_id(parent.id, "call", idx)
    path = (PUSH, parent.path, idx, parent.id, True)
    sub = Task(tid, name, path, (args, kwargs), node, (PUSH,), loop, parent.step, node.timeout)
    done, value, resume = _saved(loop, tid)
    lookup = None if done else call_lookup(sub)
    is_async = node.is_async
    in_loop = _running_loop() is not None
    if is_async and not in_loop:
        raise RuntimeError("In an sync context async tasks cannot be called")
    sub.resume = resume
    if lookup is not None:
        if is_async:
            return asyncio.ensure_future(_cached_async(sub, parent, *lookup))
        if in_loop:  # the event loop's thread must not wait on the cache: look up in the worker
            return _submit(parent, _worker(_cached_sync, sub, parent, *lookup))
        perform_call(lookup[:1])
        done = bool(lookup[1])
        if done:
            value = _hit(sub, lookup[1][0])
    if done:
        if is_async:
            fut_a: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            fut_a.set_result(value)
            return fut_a
        fut = SyncFuture(lambda: value)
        fut.claim_and_run()
        return fut
    traced = _started(sub, parent)
    if is_async:
        return asyncio.ensure_future(_run_async(sub, traced))
    return _submit(parent, _worker(_run_sync, sub, traced))


def _worker(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a copy of the caller's context (what a worker thread runs)."""
    ctx = contextvars.copy_context()
    return lambda: ctx.run(fn, *args)


def _submit(parent: Task, run: Any) -> SyncFuture:
    """A sync call on the shared pool; its caller waits for it before finishing."""
    fut = SyncFuture(run)
    submit(fut.claim_and_run)
    parent.pending_calls.append(fut)
    return fut


def _hit(sub: Task, value: Any) -> Any:
    """A call found in the cache: its result is stored as if it had run, and it does not."""
    sub.run.saves.task_writes(sub.id, [(RETURN, value)], sub.sort_key)
    return value


def _started(sub: Task, parent: Task) -> Traced:
    """A call that runs: stream its start; its trace run, when the run is traced."""
    loop = sub.run
    if "events" in loop.sink.modes:
        _call_event(sub, "on_chain_start", {"input": _bound_input(sub.node, *sub.input)})
    _emit(loop, events.task_start(loop, sub))
    return call_run(sub, parent) if loop.tracer is not None else None


def _cached_sync(sub: Task, parent: Task, get: Any, hit: list[Any]) -> Any:
    """A cached sync call made on an event loop, in its worker: look up, then run on a miss."""
    perform_call((get,))
    if hit:
        return _hit(sub, hit[0])
    return _run_sync(sub, _started(sub, parent))


async def _cached_async(sub: Task, parent: Task, get: Any, hit: list[Any]) -> Any:
    """A cached async call: await the lookup (``aget``), then run on a miss."""
    await aperform_call((get,))
    if hit:
        return _hit(sub, hit[0])
    return await _run_async(sub, _started(sub, parent))


def _emit(loop: Any, parts: events.Parts) -> None:
    """Stream a call's parts now: calls run inside their caller's task, not in the loop."""
    for mode, payload in parts:
        loop.emit(mode, payload)


def _running_loop() -> Any:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _finish(sub: Task, value: Any) -> Any:
    """A call returned ``value`` (its result already remembered in the cache, if cached)."""
    loop = sub.run
    node = sub.node
    loop.saves.task_writes(sub.id, [(RETURN, value)], sub.sort_key)
    if "events" in loop.sink.modes:
        _call_event(sub, "on_chain_stream", {"chunk": value})
        _call_event(sub, "on_chain_end", {"output": value, "input": _bound_input(node, *sub.input)})
    _emit(loop, events.call_result(loop, sub, value))
    if "updates" in loop.sink.modes:
        loop.emit("updates", {sub.name: value})
    return value


def _remembered(sub: Task, value: Any) -> Any:
    """Store a sync call's result in the cache (when cached); returns it."""
    perform_call(call_entry(sub, value))
    return value


def _bound_input(node: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call's arguments by parameter name, as LangGraph's events show a call's input."""
    import inspect

    try:
        return dict(inspect.signature(node.bound[0].func).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return {"args": args, "kwargs": kwargs}


def _call_event(sub: Task, kind: str, data: dict[str, Any]) -> None:
    """An ``astream_events`` event of a task call, a child of its caller's run (the
    converter adds the graph's run id)."""
    meta = {**sub.config.get("metadata", {}), "ls_integration": "langgraph"}
    event = {"event": kind, "name": sub.name, "run_id": sub.id, "parent_ids": [sub.path[3]],
             "tags": ["seq:step:1"], "metadata": meta, "data": data}
    sub.run.sink.emit(sub.run.ns, "events", event)


def _interrupted(sub: Task, exc: GraphInterrupt) -> None:
    loop = sub.run
    loop.saves.task_writes(sub.id, [(INTERRUPT, tuple(exc.interrupts))], sub.sort_key)
    if sub.resume:
        loop.saves.task_writes(sub.id, [(RESUME, list(sub.resume))], sub.sort_key)
    _emit(loop, events.call_result(loop, sub, interrupts=tuple(exc.interrupts)))


def _call_sync(sub: Task) -> Any:
    args, kwargs = sub.input
    fn = sub.node.bound[0]
    return fn.func(*args, **kwargs)


async def _call_async(sub: Task) -> Any:
    args, kwargs = sub.input
    return await sub.node.bound[0].func(*args, **kwargs)


def _retry_or_raise(sub: Task, exc: Exception) -> float:
    """The delay before retrying ``sub`` after ``exc`` (its attempt reset for the retry);
    re-raises ``exc`` when its retry policy gives up or it has none."""
    delay = retry_delay(sub.retry_policy, exc, sub.attempt) if sub.node.retry_policy else None
    if delay is None:
        _emit(sub.run, events.call_result(sub.run, sub, error=exc))
        raise exc
    sub.reset_attempt()
    return delay


def _run_sync(sub: Task, traced: Traced = None) -> Any:
    import time

    while True:
        token = set_current_task(sub)
        try:
            if traced is not None:
                return _traced_sync(sub, *traced)
            return _finish(sub, _remembered(sub, _attempt_sync(sub)))
        except GraphInterrupt as exc:
            _interrupted(sub, exc)
            raise
        except Exception as exc:
            time.sleep(_retry_or_raise(sub, exc))
        finally:
            reset_current_task(token)


def _attempt_sync(sub: Task) -> Any:
    if sub.timeout is not None:  # refused when the task was declared

        raise sync_timeout_error(sub.name, "Task")
    return _call_sync(sub)


def _traced_sync(sub: Task, run: ChildRun, caller_config: Any) -> Any:
    """One attempt of a call, reported as a chain run under its caller's node run."""
    args, kwargs = sub.input
    run.start_sync(caller_config, sub.name, call_inputs(args, kwargs))
    try:
        try:
            value = _attempt_sync(sub)
        except BaseException as exc:
            run.error_sync(exc)
            raise
        run.end_sync(value)
    finally:
        run.close()
    return _finish(sub, _remembered(sub, value))


async def _run_async(sub: Task, traced: Traced = None) -> Any:
    while True:
        token = set_current_task(sub)
        try:
            if traced is not None:
                return await _traced_async(sub, *traced)
            value = await _attempt_async(sub)
            await aperform_call(call_entry(sub, value))
            return _finish(sub, value)
        except GraphInterrupt as exc:
            _interrupted(sub, exc)
            raise
        except Exception as exc:
            await asyncio.sleep(_retry_or_raise(sub, exc))
        finally:
            reset_current_task(token)


async def _attempt_async(sub: Task) -> Any:
    if sub.timeout is None:
        return await _call_async(sub)

    return await with_timeout_async(sub, sub.timeout, _call_async)


async def _traced_async(sub: Task, run: ChildRun, caller_config: Any) -> Any:
    args, kwargs = sub.input
    await run.start_async(caller_config, sub.name, call_inputs(args, kwargs))
    try:
        try:
            value = await _attempt_async(sub)
        except BaseException as exc:
            await run.error_async(exc)
            raise
        await run.end_async(value)
    finally:
        run.close()
    await aperform_call(call_entry(sub, value))
    return _finish(sub, value)
