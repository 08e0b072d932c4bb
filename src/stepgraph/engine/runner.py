"""Running one task: its body, then its writers, with retries and timeouts (sync and async).

Both drivers call these. An async body runs under its timeout (sync bodies cannot be
cancelled, so a timeout on one is refused, see ``engine/timeout_support.py``); writers
(which turn the output into writes and may call routers) run after the body.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from stepgraph._running import reset_current_task, set_current_task
from stepgraph.constants import ERROR, ERROR_SOURCE_NODE
from stepgraph.engine.retry import retry_delay
from stepgraph.engine.subgraph import parent_command_value
from stepgraph.engine.timeout_support import natively_async, sync_timeout_error
from stepgraph.engine.tracing import ChildRun, node_run
from stepgraph.errors import (
    GraphBubbleUp,
    GraphInterrupt,
    NodeCancelledError,
    NodeError,
    NodeTimeoutError,
    ParentCommand,
)
from stepgraph.stream import messages as _messages

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task


def _note(exc: BaseException, task: Task) -> None:
    note = f"During task with name '{task.name}' and id '{task.id}'"
    notes = getattr(exc, "__notes__", None)
    if not notes or note not in notes:
        exc.add_note(note)


def _write_sync(task: Task, value: Any) -> None:
    for writer in task.node.writers:
        writer.run(task, value)


def _attempt_sync(task: Task) -> None:
    if "messages" in task.run.sink.modes and not _messages.in_scope(task):
        return _messages.attempt_sync(task, _attempt_sync)  # runs this again, streaming messages
    if task.run.tracer is not None and (traced := node_run(task)) is not None:
        return _traced_sync(task, traced)
    token = set_current_task(task)
    try:
        value = _run_body_sync(task)
        for writer in task.node.writers:  # (``_write_sync``, inlined: every task)
            writer.run(task, value)
    finally:
        reset_current_task(token)


def _run_body_sync(task: Task) -> Any:
    if task.timeout is not None:  # refused at compile time; a Send(timeout=) can still ask
        raise sync_timeout_error(task.name)
    try:
        value = task.input  # (the node's steps, in order)
        for step in task.node.bound:
            value = step.call(value, task)
        return value
    except ParentCommand as exc:
        return parent_command_value(exc)
    finally:
        if task.pending_calls:
            _wait_calls(task)


def _traced_sync(task: Task, traced: ChildRun) -> None:
    """One attempt reported as a chain run named after the node (see ``engine.tracing``)."""
    token = set_current_task(task)
    try:
        traced.start_sync(task.config, task.name, task.input)
        try:
            value = _run_body_sync(task)
            _write_sync(task, value)
        except BaseException as exc:
            traced.error_sync(exc)
            raise
        traced.end_sync(value)
    finally:
        traced.close()
        reset_current_task(token)


def _remaining(task: Task, policy: Any, start: float) -> float:
    now = time.monotonic()
    limits = []
    if policy.run_timeout is not None:
        limits.append(start + policy.run_timeout - now)
    if policy.idle_timeout is not None:
        limits.append(task.last_progress + policy.idle_timeout - now)
    return min(limits) if limits else 3600.0


def _check_expired(task: Task, policy: Any, start: float) -> None:
    now = time.monotonic()
    elapsed = now - start
    if policy.run_timeout is not None and elapsed >= policy.run_timeout:
        raise NodeTimeoutError(
            task.name,
            elapsed,
            kind="run",
            run_timeout=policy.run_timeout,
            idle_timeout=policy.idle_timeout,
        )
    if policy.idle_timeout is not None and now - task.last_progress >= policy.idle_timeout:
        raise NodeTimeoutError(
            task.name,
            elapsed,
            kind="idle",
            run_timeout=policy.run_timeout,
            idle_timeout=policy.idle_timeout,
        )


def _wait_calls(task: Task) -> None:
    """Functional-API task calls finish (and store their results) before their caller."""
    for fut in task.pending_calls:
        try:
            fut.result()
        except BaseException:  # noqa: BLE001, S110 - the caller saw (or ignored) the error
            pass
    task.pending_calls.clear()


_HANDLE = -1.0
"""``_after_failure``: run the node's error handler now."""
_SETTLED = -2.0
"""``_after_failure``: the task is settled (paused on an interrupt, or held for its handler)."""


def _after_failure(task: Task, exc: BaseException) -> float:
    """What a failed attempt leads to, the same for both drivers: the delay before the next
    attempt (the failed one forgotten), ``_HANDLE``, ``_SETTLED``, or ``exc`` is raised
    (recorded as the task's error). The attempt's task calls have finished by now."""
    if isinstance(exc, GraphInterrupt):
        task.interrupts = tuple(exc.interrupts)
        task.paused = True
        task.writes.clear()
        return _SETTLED
    if isinstance(exc, GraphBubbleUp):
        task.bubbled = True
        raise exc
    if not isinstance(exc, Exception):
        raise exc
    policies = task.retry_policy
    delay = retry_delay(policies, exc, task.attempt) if policies else None
    if delay is None:
        if task.node.error_handler is not None:
            return _SETTLED if _hold_for_handler(task, exc) else _HANDLE
        _fail(task, exc)
        raise exc
    task.reset_attempt()
    return delay


async def _await_calls(task: Task) -> None:
    """Async twin of ``_wait_calls``: the calls a sync body left running (on the pool)
    finish before the attempt ends, also before a retry."""
    for fut in task.pending_calls:
        try:
            await fut
        except BaseException:  # noqa: BLE001, S110 - the caller saw (or ignored) the error
            pass
    task.pending_calls.clear()


def run_task_sync(task: Task) -> None:
    """Run ``task`` to completion with retries. Interrupts are recorded, errors raised."""
    task.first_attempt_time = time.time()
    if task.handler_due is not None:  # the node failed in an earlier run
        return _handle_sync(task, task.handler_due)
    while True:
        try:
            _attempt_sync(task)
            return
        except BaseException as exc:  # noqa: BLE001 - _after_failure re-raises what it must
            outcome, failure = _after_failure(task, exc), exc
        if outcome == _HANDLE:
            return _handle_sync(task, failure)
        if outcome == _SETTLED:
            return
        time.sleep(outcome)


def _start_handler(task: Task, exc: BaseException) -> Any:
    """Prepare ``task`` for its node's error handler; returns ``(handler, writer)``."""
    task.writes.clear()
    task.handled_error = NodeError(task.name, exc)
    task.label = f"__error_handler__{task.name}"
    return task.node.error_handler


def _hold_for_handler(task: Task, exc: BaseException) -> bool:
    """With ``interrupt_before=["__error_handler__<node>"]`` the run pauses before the
    handler: the node's error is saved as pending, and resuming runs the handler."""
    if f"__error_handler__{task.name}" not in (task.run.interrupt_before or ()):
        return False
    _note(exc, task)
    task.error = exc
    task.writes[:] = [(ERROR, exc), (ERROR_SOURCE_NODE, task.name)]
    task.held_for_handler = True
    return True


def _handler_failed(task: Task, node_error: BaseException, err: BaseException) -> None:
    """The handler raised: the run fails with its error, and the node's error stays saved
    with the handler still due, so resuming the thread runs the handler again."""
    _note(err, task)
    task.error = err
    task.writes[:] = [(ERROR, node_error), (ERROR_SOURCE_NODE, task.name)]


def _handle_sync(task: Task, exc: BaseException) -> None:
    """Run the node's error handler instead of failing; its writes replace the node's."""
    handler, writer = _start_handler(task, exc)
    token = set_current_task(task)
    try:
        writer.run(task, handler.call(task.input, task))
    except Exception as err:
        _handler_failed(task, exc, err)
        raise
    finally:
        reset_current_task(token)


async def _handle_async(task: Task, exc: BaseException) -> None:
    handler, writer = _start_handler(task, exc)
    token = set_current_task(task)
    try:
        writer.run(task, await handler.acall(task.input, task))
    except Exception as err:
        _handler_failed(task, exc, err)
        raise
    finally:
        reset_current_task(token)


def _fail(task: Task, exc: BaseException) -> None:
    _note(exc, task)
    task.error = exc
    task.writes[:] = [(ERROR, exc)]


# -- async ---------------------------------------------------------------------------------


async def _body_async(task: Task) -> Any:
    value = task.input
    for step in task.node.bound:
        value = await step.acall(value, task)
    return value


async def _attempt_async(task: Task) -> None:
    if "messages" in task.run.sink.modes and not _messages.in_scope(task):
        return await _messages.attempt_async(task, _attempt_async)  # runs this again, streaming
    if task.run.tracer is not None and (traced := node_run(task)) is not None:
        return await _traced_async(task, traced)
    token = set_current_task(task)
    try:
        await _write_async(task, await _run_body_async(task))
    finally:
        reset_current_task(token)


async def _run_body_async(task: Task) -> Any:
    policy = task.timeout
    if policy is not None:
        if not all(natively_async(step) for step in task.node.bound):
            raise sync_timeout_error(task.name)
    try:
        return await (_body_async(task) if policy is None else with_timeout_async(task, policy))
    except ParentCommand as exc:
        return parent_command_value(exc)
    finally:
        if task.pending_calls:
            await _await_calls(task)


async def _write_async(task: Task, value: Any) -> None:
    for writer in task.node.writers:
        if writer.is_async:
            await writer.arun(task, value)
        else:
            writer.run(task, value)


async def _traced_async(task: Task, traced: ChildRun) -> None:
    token = set_current_task(task)
    try:
        await traced.start_async(task.config, task.name, task.input)
        try:
            value = await _run_body_async(task)
            await _write_async(task, value)
        except BaseException as exc:
            await traced.error_async(exc)
            raise
        await traced.end_async(value)
    finally:
        traced.close()
        reset_current_task(token)


async def with_timeout_async(task: Task, policy: Any, body: Any = None) -> Any:
    """Await ``body(task)`` (the node's body by default) under ``policy``."""
    import asyncio

    start = time.monotonic()
    task.last_progress = start
    inner = asyncio.ensure_future((body or _body_async)(task))
    try:
        while True:
            wait = max(_remaining(task, policy, start), 0.0)
            done, _ = await asyncio.wait({inner}, timeout=wait)
            if done:
                return inner.result()
            _check_expired(task, policy, start)
    except BaseException:
        if not inner.done():
            inner.cancel()
            try:
                await inner
            except BaseException:  # noqa: S110 - the timeout error is what matters
                pass
        raise


async def run_task_async(task: Task) -> None:
    """Async twin of ``run_task_sync`` (the same ``_after_failure`` rules)."""
    import asyncio

    task.first_attempt_time = time.time()
    if task.handler_due is not None:  # the node failed in an earlier run
        return await _handle_async(task, task.handler_due)
    while True:
        try:
            await _attempt_async(task)
            return
        except asyncio.CancelledError:
            if _cancel_requested():
                raise
            raise node_cancelled(task) from None
        except BaseException as exc:  # noqa: BLE001 - _after_failure re-raises what it must
            outcome, failure = _after_failure(task, exc), exc
        if outcome == _HANDLE:
            return await _handle_async(task, failure)
        if outcome == _SETTLED:
            return
        await asyncio.sleep(outcome)


def node_cancelled(task: Task) -> NodeCancelledError:
    """The error of a task whose body raised ``CancelledError`` itself (the run was not
    cancelled), recorded as the task's error."""
    err = NodeCancelledError(task.name)
    _fail(task, err)
    return err


def _cancel_requested() -> bool:
    import asyncio

    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0
