"""The functional API: ``@entrypoint`` turns a function into a graph, ``@task`` into a step.

A workflow is plain Python: an entrypoint calls tasks, which return futures and may run in
parallel. With a checkpointer, each finished task's result is stored, so when a workflow
resumes after ``interrupt()`` its completed tasks are not run again.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stepgraph._constants import PREVIOUS
from stepgraph.channels import EphemeralValue, LastValue
from stepgraph.constants import END, START
from stepgraph.engine.caching import task_namespace
from stepgraph.engine.callable import NodeFunction, callable_name, is_async_callable
from stepgraph.engine.node import PregelNode, Writer
from stepgraph.engine.timeout_support import sync_timeout_error
from stepgraph.pregel.main import Pregel
from stepgraph.types import CachePolicy, RetryPolicy, TimeoutPolicy
from stepgraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    deprecated_since,
)

__all__ = ["entrypoint", "task"]

R = TypeVar("R")
S = TypeVar("S")


def _reject_generators(fn: Callable[..., Any]) -> None:
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise NotImplementedError("Generators are not supported in the Functional API.")


class _TaskFunction(Generic[R]):
    """A function decorated with ``@task``: calling it schedules a task and returns a future."""

    def __init__(self, func: Callable[..., Any], *, name: str | None, retry_policy: Any,
                 cache_policy: CachePolicy | None, timeout: Any) -> None:
        _reject_generators(func)
        self.func = func
        self.name = name or callable_name(func)
        timeout = TimeoutPolicy.coerce(timeout)
        if timeout is not None and not is_async_callable(func):
            raise sync_timeout_error(self.name, "Task")
        policies = () if retry_policy is None else (
            (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)
        )
        self.node = PregelNode(
            triggers=(), channels=(), bound=NodeFunction(func, self.name),
            retry_policy=policies or None, cache_policy=cache_policy,
            timeout=timeout, name=self.name,
        )
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # lazy: asyncio and the pool, on the first call
        from stepgraph.engine.calls import call_task

        return call_task(self.node, self.name, args, kwargs)

    def clear_cache(self, cache: Any) -> None:
        """Forget this task's cached results in ``cache``."""
        cache.clear([task_namespace(self.node)])

    async def aclear_cache(self, cache: Any) -> None:
        await cache.aclear([task_namespace(self.node)])


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy | None = None,
    timeout: float | TimeoutPolicy | None = None,
    **kwargs: Any,
) -> Any:
    """Decorate a function as a task: calls return futures (``.result()`` or ``await``)."""
    retry_policy = _deprecated_retry(retry_policy, kwargs, "task()")
    timeout = TimeoutPolicy.coerce(timeout)  # a bad value fails here, not at decoration

    def decorate(func: Callable[..., Any]) -> _TaskFunction[Any]:
        return _TaskFunction(func, name=name, retry_policy=retry_policy,
                             cache_policy=cache_policy, timeout=timeout)

    if __func_or_none__ is not None:
        return decorate(__func_or_none__)
    return decorate


def _deprecated_retry(retry_policy: Any, kwargs: dict[str, Any], where: str) -> Any:
    """``retry_policy``, or the deprecated ``retry=`` (with a warning); other unknown keyword
    arguments are refused."""
    if "retry" in kwargs:
        deprecated_since(LangGraphDeprecatedSinceV05, "`retry` is deprecated and will be "
                         "removed. Please use `retry_policy` instead.", stacklevel=3)
        retry_policy = retry_policy or kwargs.pop("retry")
    if kwargs:
        raise TypeError(f"{where} got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    return retry_policy


class _FinalWriter(Writer):
    """Writes the entrypoint's result to the output and the value saved as ``previous``."""

    __slots__ = ()

    def run(self, task: Any, value: Any) -> None:
        if isinstance(value, entrypoint.final):
            task.writes.extend(((END, value.value), (PREVIOUS, value.save)))
        else:
            task.writes.extend(((END, value), (PREVIOUS, value)))


class entrypoint(Generic[R]):  # noqa: N801 - LangGraph-compatible name
    """Decorate a workflow function; the result is a runnable graph (a ``Pregel``).

    The function takes one input argument and may ask for ``previous`` (the value saved by
    the last run on this thread), ``config``, ``runtime``, ``writer`` and ``store``.
    """

    def __init__(self, checkpointer: Any = None, store: Any = None, cache: Any = None,
                 context_schema: Any = None, cache_policy: CachePolicy | None = None,
                 retry_policy: Any = None, timeout: Any = None, **kwargs: Any) -> None:
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        if "config_schema" in kwargs:
            deprecated_since(LangGraphDeprecatedSinceV10, "`config_schema` is deprecated and will "
                             "be removed. Please use `context_schema` instead.")
            context_schema = context_schema or kwargs.pop("config_schema")
        self.context_schema = context_schema
        self.cache_policy = cache_policy
        self.retry_policy = _deprecated_retry(retry_policy, kwargs, "entrypoint()")
        self.timeout = TimeoutPolicy.coerce(timeout)

    @dataclass(frozen=True)
    class final(Generic[S, R]):  # noqa: N801 - LangGraph-compatible name
        """Return ``value`` to the caller but save ``save`` as the next run's ``previous``."""

        value: Any
        save: Any

    def __call__(self, func: Callable[..., Any]) -> Pregel:
        _reject_generators(func)
        params = list(inspect.signature(func).parameters.values())
        if not params:
            raise ValueError("Entrypoint function must have at least one parameter")
        name = callable_name(func)
        policies = () if self.retry_policy is None else (
            (self.retry_policy,) if isinstance(self.retry_policy, RetryPolicy) else tuple(self.retry_policy)
        )
        node = PregelNode(
            triggers=(START,), channels=START, bound=NodeFunction(func, name),
            writers=[_FinalWriter()], retry_policy=policies or None,
            cache_policy=self.cache_policy, timeout=self.timeout, name=name,
        )
        input_type, output_type, save_type = _io_types(func, params[0].name)
        graph = Pregel(
            nodes={name: node},
            channels={START: EphemeralValue(input_type), END: LastValue(output_type),
                      PREVIOUS: LastValue(save_type)},
            input_channels=START, output_channels=END, stream_channels=END,
            stream_mode="updates", stream_eager=True, checkpointer=self.checkpointer,
            store=self.store,
            cache=self.cache, context_schema=self.context_schema, name="LangGraph",
        )
        graph.is_async_entrypoint = is_async_callable(func)  # type: ignore[attr-defined]
        return graph


def _io_types(func: Callable[..., Any], first: str) -> tuple[Any, Any, Any]:
    """(input, output, saved) types of an entrypoint from its annotations: the first
    parameter's, and the return type (``entrypoint.final[V, S]`` gives ``V`` and ``S``)."""
    import typing

    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable string annotations: use what resolves
        hints = {k: v for k, v in getattr(func, "__annotations__", {}).items()
                 if not isinstance(v, str)}
    input_type = hints.get(first, Any)
    returned = hints.get("return", Any)
    if returned is entrypoint.final:
        return input_type, Any, Any
    if typing.get_origin(returned) is entrypoint.final:
        args = typing.get_args(returned)
        if len(args) != 2:
            raise TypeError("Annotate both the returned and the saved value, e.g. "
                            "`-> entrypoint.final[int, str]` returns an int and saves a str.")
        return input_type, args[0], args[1]
    return input_type, returned, returned
