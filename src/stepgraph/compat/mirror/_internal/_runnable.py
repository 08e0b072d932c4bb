"""``langgraph._internal._runnable``: ``RunnableCallable``, a node body with sync and async twins.

langchain v1's ``create_agent`` builds every node from one, langmem subclasses it and
langgraph-supervisor wraps agents in it. It is a langchain-core ``Runnable`` (so stepgraph
runs it as a runnable node, ``invoke(state, config)`` / ``ainvoke``) whose functions get the
parameters stepgraph injects into function nodes, by name: ``config``, ``runtime``,
``store``, ``writer``, ``previous``, ``context`` and ``error``. The runtime is the one in the
config (``configurable["__pregel_runtime"]``), else the running task's.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    var_child_runnable_config,
)

from stepgraph._running import current_task
from stepgraph.engine.taskconfig import RUNTIME_KEY
from stepgraph.errors import GraphDefinitionError
from stepgraph.runtime import Runtime

__all__ = ["RunnableCallable", "RunnableLike", "coerce_to_runnable"]

RunnableLike: TypeAlias = Runnable | Callable[..., Any] | Callable[..., Awaitable[Any]]

_RUNTIME_FIELDS = {"store": "store", "writer": "stream_writer", "previous": "previous",
                   "context": "context"}
_INJECTED = ("config", "runtime", "error", *_RUNTIME_FIELDS)
_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_MISSING: Any = object()


def _accepted(func: Callable[..., Any]) -> dict[str, Any]:
    """{injected name: its default} for the parameters of ``func`` stepgraph fills."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    return {name: p.default for name, p in params.items() if name in _INJECTED and p.kind in _KINDS}


class RunnableCallable(Runnable):
    """``func`` for ``invoke``, ``afunc`` for ``ainvoke`` (the other one when only one is given).

    ``trace=True`` reports a chain run of its own to callbacks/tracing (``False``: none);
    ``recurse=True`` invokes a ``Runnable`` the function returns with the same input.
    """

    def __init__(
        self,
        func: Callable[..., Any] | None,
        afunc: Callable[..., Awaitable[Any]] | None = None,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        trace: bool = True,
        recurse: bool = True,
        explode_args: bool = False,
        **kwargs: Any,
    ) -> None:
        if func is None and afunc is None:
            raise ValueError("At least one of func or afunc must be provided.")
        self.func = func
        self.afunc = afunc
        if name is None:
            fn = func if func is not None else afunc
            fn_name = getattr(fn, "__name__", None)
            name = fn_name if fn_name and fn_name != "<lambda>" else None
        self.name = name
        self.tags = tags
        self.trace = trace
        self.recurse = recurse
        self.explode_args = explode_args
        self.kwargs = kwargs
        self.func_accepts = _accepted(func) if func is not None else {}
        self.afunc_accepts = _accepted(afunc) if afunc is not None else self.func_accepts

    def __repr__(self) -> str:
        return f"RunnableCallable({self.get_name()})"

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        base = name or self.name or "RunnableCallable"
        return f"{base}{suffix}" if suffix else base

    # -- arguments ------------------------------------------------------------------------
    def _call_args(self, input: Any, config: RunnableConfig, kwargs: dict[str, Any],
                   accepts: dict[str, Any]) -> tuple[tuple, dict]:
        if self.explode_args:
            args, extra = input
            kwargs = {**self.kwargs, **extra, **kwargs}
        else:
            args = (input,)
            kwargs = {**self.kwargs, **kwargs}
        if not accepts:
            return tuple(args), kwargs
        task = current_task()
        runtime = (config.get("configurable") or {}).get(RUNTIME_KEY)
        if runtime is None and task is not None:
            runtime = task.runtime
        for kw, default in accepts.items():
            if kw in kwargs:
                continue
            value: Any = _MISSING
            if kw == "config":
                value = config
            elif kw == "error":
                value = getattr(task, "handled_error", _MISSING) if task is not None else _MISSING
            elif runtime is not None:
                value = runtime if kw == "runtime" else getattr(runtime, _RUNTIME_FIELDS[kw], _MISSING)
            if value is _MISSING or (value is None and kw == "store" and default is not inspect.Parameter.empty):
                if default is inspect.Parameter.empty:
                    if kw == "runtime":
                        value = Runtime()
                    else:
                        raise GraphDefinitionError(
                            f"Missing required config key '{kw}' for '{self.get_name()}'.",
                            code="SG110",
                            hint="run it inside a graph (compiled with a store for 'store') "
                            "or give the parameter a default",
                        )
                else:
                    value = default
            kwargs[kw] = value
        return tuple(args), kwargs

    # -- running --------------------------------------------------------------------------
    def _tagged(self, config: RunnableConfig) -> RunnableConfig:
        if not self.tags:
            return config
        return {**config, "tags": [*(config.get("tags") or ()), *self.tags]}

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        if self.func is None:
            raise TypeError(
                f'No synchronous function provided to "{self.get_name()}". Either initialize '
                "with a synchronous function or invoke via the async API (ainvoke, astream...)."
            )
        config = ensure_config(config)
        args, kw = self._call_args(input, config, kwargs, self.func_accepts)
        if self.trace:
            manager = get_callback_manager_for_config(self._tagged(config))
            run = manager.on_chain_start(None, input, name=config.get("run_name") or self.get_name(),
                                         run_id=config.pop("run_id", None))
            try:
                child = patch_config(config, callbacks=run.get_child())
                context = contextvars.copy_context()
                context.run(var_child_runnable_config.set, child)
                ret = context.run(self.func, *args, **kw)
            except BaseException as exc:
                run.on_chain_error(exc)
                raise
            run.on_chain_end(ret)
        else:
            ret = self.func(*args, **kw)
        if self.recurse and isinstance(ret, Runnable):
            return ret.invoke(input, config)
        return ret

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        if self.afunc is None:
            return self.invoke(input, config, **kwargs)
        config = ensure_config(config)
        args, kw = self._call_args(input, config, kwargs, self.afunc_accepts)
        if self.trace:
            manager = get_async_callback_manager_for_config(self._tagged(config))
            run = await manager.on_chain_start(None, input, name=config.get("run_name") or self.get_name(),
                                               run_id=config.pop("run_id", None))
            try:
                child = patch_config(config, callbacks=run.get_child())
                context = contextvars.copy_context()
                context.run(var_child_runnable_config.set, child)
                ret = await asyncio.create_task(self.afunc(*args, **kw), context=context)
            except BaseException as exc:
                await run.on_chain_error(exc)
                raise
            await run.on_chain_end(ret)
        else:
            ret = await self.afunc(*args, **kw)
        if self.recurse and isinstance(ret, Runnable):
            return await ret.ainvoke(input, config)
        return ret


def coerce_to_runnable(thing: Any, *, name: str | None = None, trace: bool = True) -> Runnable:
    """``thing`` as a ``Runnable``: runnables unchanged, functions in a ``RunnableCallable``."""
    if isinstance(thing, Runnable):
        return thing
    if inspect.iscoroutinefunction(thing):
        return RunnableCallable(None, thing, name=name, trace=trace)
    if callable(thing):
        return RunnableCallable(thing, name=name, trace=trace)
    raise TypeError(f"Expected a Runnable or a callable, got {type(thing).__name__}")
