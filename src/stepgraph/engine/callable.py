"""Calling user code: a function node, a router, or any object with ``invoke``/``ainvoke``.

``NodeFunction`` inspects a function's signature once, at build time, and injects the
parameters LangGraph injects by name (``config``, ``runtime``, ``writer``, ``store``,
``previous``), so the per-call cost is one dict lookup, not a signature walk.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING, Any

from stepgraph._introspect import derived, signature
from stepgraph.engine.hop import hop
from stepgraph.errors import GraphDefinitionError, StepgraphError

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task

INJECTABLE = ("config", "runtime", "writer", "store", "previous", "error")


def is_async_callable(func: Any) -> bool:
    """True for ``async def`` functions, partials of them and objects with ``async __call__``."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def callable_name(func: Any) -> str:
    """A readable default node name for ``func``."""
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "name", None)
    if isinstance(name, str) and name:
        return name
    name = getattr(func, "__name__", None)
    if isinstance(name, str):
        return name
    return type(func).__name__


_Plan = tuple[bool, tuple[str, ...], tuple[str, ...], Any]


def _inject_plan(func: Callable[..., Any]) -> _Plan:
    """(takes_input, injected names, required injected names, the ``config`` parameter's
    annotation) for ``func``; remembered per function (``_introspect.derived``)."""
    try:
        sig = signature(func)
    except (TypeError, ValueError):
        return True, (), (), inspect.Parameter.empty
    params = list(sig.parameters.values())
    takes_input = False
    injected: list[str] = []
    required: list[str] = []
    config_annotation: Any = inspect.Parameter.empty
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if i == 0 and p.kind == p.VAR_POSITIONAL:
                takes_input = True
            continue
        if i == 0 and p.name not in INJECTABLE[1:] and p.kind != p.KEYWORD_ONLY:
            takes_input = True
            continue
        if i == 0 and p.name == "config" and p.kind != p.KEYWORD_ONLY:
            takes_input = True
            continue
        if p.name in INJECTABLE:
            if p.name == "config":
                config_annotation = p.annotation
            injected.append(p.name)
            if p.default is p.empty:
                required.append(p.name)
    return takes_input, tuple(injected), tuple(required), config_annotation


_EMPTY = inspect.Parameter.empty


def _call_plan(func: Callable[..., Any]) -> tuple[bool, bool, tuple[str, ...], tuple[str, ...], Any]:
    """``(is_async, *_inject_plan(func))``: what ``NodeFunction`` reads, derived at once."""
    return (is_async_callable(func), *_inject_plan(func))


def _is_config_type(annotation: Any) -> bool:
    """``RunnableConfig`` (stepgraph's or langchain's), optionally ``| None``/``Optional``."""
    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        for wrapper in ("Optional[", "typing.Optional["):
            if text.startswith(wrapper) and text.endswith("]"):
                text = text[len(wrapper) : -1]
        parts = [p for p in text.split("|") if p != "None"]
        return len(parts) == 1 and parts[0].rsplit(".", 1)[-1] == "RunnableConfig"
    if getattr(annotation, "__name__", None) == "RunnableConfig":
        return True
    args = getattr(annotation, "__args__", None)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return len(rest) == 1 and _is_config_type(rest[0])
    return False


def _check_config_annotation(annotation: Any) -> None:
    if annotation is inspect.Parameter.empty or _is_config_type(annotation):
        return
    import warnings

    shown = (
        annotation if isinstance(annotation, str) else getattr(annotation, "__name__", annotation)
    )
    warnings.warn(
        "The 'config' parameter should be typed as 'RunnableConfig' or 'RunnableConfig | None', "
        f"not '{shown!s}'. (stepgraph still passes the run config to it.)",
        UserWarning,
        stacklevel=5,  # the user's add_node call (via NodeFunction, coerce_callable, add_node)
    )


class NodeFunction:
    """A plain (sync or async) function used as a node body or router."""

    __slots__ = ("func", "name", "is_async", "takes_input", "inject", "required", "__weakref__")

    def __init__(self, func: Callable[..., Any], name: str | None = None) -> None:
        self.func = func
        self.name = name or callable_name(func)
        self.is_async, self.takes_input, self.inject, self.required, config_annotation = (
            derived(func, _call_plan)
        )
        if config_annotation is not _EMPTY:
            _check_config_annotation(config_annotation)

    def __repr__(self) -> str:
        return f"NodeFunction({self.name})"

    def _kwargs(self, task: Task | None) -> dict[str, Any]:
        if not self.inject:
            return {}
        if task is None:
            return {}
        kwargs: dict[str, Any] = {}
        for name in self.inject:
            if name == "config":
                kwargs["config"] = task.config
            elif name == "runtime":
                kwargs["runtime"] = task.runtime
            elif name == "writer":
                kwargs["writer"] = task.runtime.stream_writer
            elif name == "store":
                store = task.runtime.store
                if store is None and "store" in self.required:
                    raise GraphDefinitionError(
                        f"Missing required config key 'store' for '{task.name}'.",
                        code="SG110",
                        hint="compile the graph with store=InMemoryStore() or give the "
                        "parameter a default of None",
                    )
                kwargs["store"] = store
            elif name == "previous":
                kwargs["previous"] = task.runtime.previous
            elif name == "error":
                kwargs["error"] = task.handled_error
        return kwargs

    def call(self, input: Any, task: Task | None) -> Any:
        """Call a sync function (an async one raises a coded error with a hint)."""
        if self.is_async:
            raise StepgraphError(
                f"Node '{self.name}' is async and cannot run in a synchronous invoke/stream.",
                code="SG307",
                hint="use ainvoke()/astream(), or make the function synchronous",
            )
        if not self.inject:  # (most functions: no injected parameters)
            return self.func(input) if self.takes_input else self.func()
        kwargs = self._kwargs(task)
        if self.takes_input:
            return self.func(input, **kwargs)
        return self.func(**kwargs)

    async def acall(self, input: Any, task: Task | None) -> Any:
        """Await an async function; a sync one runs in a worker thread."""
        kwargs = self._kwargs(task)
        if self.is_async:
            if self.takes_input:
                return await self.func(input, **kwargs)
            return await self.func(**kwargs)
        return await run_sync_in_thread(self.call, input, task)


async def run_sync_in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` on the shared pool, keeping the context (contextvars) intact."""
    return await hop(fn, *args)


class RunnableNode:
    """An object with ``invoke(input, config)`` (a compiled graph, a langchain Runnable...)."""

    __slots__ = ("runnable", "name", "is_async", "takes_input", "__weakref__")

    def __init__(self, runnable: Any, name: str | None = None) -> None:
        self.runnable = runnable
        self.name = name or callable_name(runnable)
        self.is_async = not hasattr(runnable, "invoke")
        self.takes_input = True

    def call(self, input: Any, task: Task | None) -> Any:
        config = task.config if task is not None else None
        return self.runnable.invoke(input, config)

    async def acall(self, input: Any, task: Task | None) -> Any:
        config = task.config if task is not None else None
        if hasattr(self.runnable, "ainvoke"):
            return await self.runnable.ainvoke(input, config)
        return await run_sync_in_thread(self.call, input, task)


def _is_runnable(obj: Any) -> bool:
    """An object to call through ``invoke``: a callable must have ``invoke`` and ``ainvoke``
    on its class (a ``Mock`` answers every attribute, so it is called as a function)."""
    if not callable(obj):
        return hasattr(obj, "invoke")
    cls = type(obj)
    return callable(getattr(cls, "invoke", None)) and callable(getattr(cls, "ainvoke", None))


def coerce_callable(obj: Any, name: str | None = None) -> NodeFunction | RunnableNode:
    """Wrap a node body: runnables keep their ``invoke``; anything else must be callable."""
    if type(obj) is FunctionType:  # (most bodies: a plain function's class has no ``invoke``)
        return NodeFunction(obj, name)
    if isinstance(obj, (NodeFunction, RunnableNode)):
        return obj
    if _is_runnable(obj):
        return RunnableNode(obj, name)
    if not callable(obj):
        raise GraphDefinitionError(
            f"Node action must be callable, got {type(obj).__name__}: {obj!r}.",
            code="SG104",
            hint="pass a function, an async function or a compiled graph",
        )
    return NodeFunction(obj, name)
