"""LangChain callbacks and LangSmith tracing of a run.

When a run's config carries langchain callbacks (``config["callbacks"]``) or LangSmith tracing
is on (``LANGSMITH_TRACING``, ``langsmith.tracing_context(enabled=True)``...), and
langchain-core is installed, the run is reported to those callbacks as one chain run (named
``run_name`` or the graph's name) whose children are its nodes' runs (one per attempt,
tagged ``graph:step:N``). What a node calls (chat models, subgraphs, tools) nests under the
node's run: the config the node sees carries the node run's callbacks, and the node run is
the current LangSmith run tree while it runs (``langsmith.get_current_run_tree()``).

Nothing here is imported, and nothing costs anything, when no run asks for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

_SCOPE: ContextVar[Task | None] = ContextVar("stepgraph_trace_scope", default=None)
_ENV = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")


@cache
def _tracing_env() -> bool:
    """Tracing switched on by the environment (read once, as LangSmith does)."""
    return any(os.environ.get(k, "").lower() == "true" for k in _ENV)


def _tracing_on() -> bool:
    """LangSmith tracing is enabled (checked without importing anything not loaded yet)."""
    if _tracing_env():
        return True
    if "langsmith" in sys.modules:
        from langsmith import utils

        if utils.tracing_is_enabled():
            return True
    ctx = sys.modules.get("langchain_core.tracers.context")
    return ctx is not None and ctx.tracing_v2_callback_var.get() is not None


def _user_handlers(callbacks: Any) -> bool:
    """Whether ``callbacks`` (a list or a langchain manager) has handlers besides the ones
    stepgraph adds to stream ``messages`` / ``events``."""
    if not callbacks:
        return False
    if isinstance(callbacks, list):
        handlers = callbacks
    else:
        handlers = [*getattr(callbacks, "handlers", ()), *getattr(callbacks, "inheritable_handlers", ())]
    return any(not getattr(h, "stepgraph_internal", False) for h in handlers)


def wanted(config: Any) -> bool:
    """Whether a run with ``config`` reports to langchain callbacks."""
    if not (_user_handlers(config.get("callbacks")) or _tracing_on()):
        return False
    from stepgraph.messages._merge import langchain_available

    return langchain_available()


class RunTrace:
    """The chain run of one graph run, and the managers its nodes' runs start from."""

    __slots__ = ("run",)

    def __init__(self, run: Any) -> None:
        self.run = run

    def step_callbacks(self, step: int) -> Any:
        """The callbacks of a task config in ``step`` (children of the graph's run)."""
        return self.run.get_child(f"graph:step:{step}")


def _configure(config: Any, manager_cls: Any) -> Any:
    manager = manager_cls.configure(
        inheritable_callbacks=config.get("callbacks"),
        inheritable_tags=config.get("tags"),
        inheritable_metadata=config.get("metadata"),
    )
    if "ls_integration" not in manager.metadata:
        manager.add_metadata({"ls_integration": "langgraph"})
    return manager


def _run_args(loop: RunLoop) -> dict[str, Any]:
    config = loop.config
    return {"name": config.get("run_name") or loop.graph.name, "run_id": config.get("run_id")}


def begin(loop: RunLoop) -> None:
    """Start ``loop``'s chain run when its config asks for callbacks (sync driver)."""
    if not wanted(loop.config):
        return
    from langchain_core.callbacks.manager import CallbackManager

    manager = _configure(loop.config, CallbackManager)
    loop.trace = RunTrace(manager.on_chain_start(None, loop.input, **_run_args(loop)))


async def abegin(loop: RunLoop) -> None:
    """Async twin of :func:`begin`."""
    if not wanted(loop.config):
        return
    from langchain_core.callbacks.manager import AsyncCallbackManager

    manager = _configure(loop.config, AsyncCallbackManager)
    loop.trace = RunTrace(await manager.on_chain_start(None, loop.input, **_run_args(loop)))


def _outcome(loop: RunLoop, exc: BaseException | None) -> tuple[str, Any]:
    if exc is not None:
        return "on_chain_error", exc
    return "on_chain_end", loop.output()


def finish(loop: RunLoop, exc: BaseException | None = None) -> None:
    """End ``loop``'s chain run with its output, or with the error that ended it."""
    if loop.trace is not None:
        method, arg = _outcome(loop, exc)
        getattr(loop.trace.run, method)(arg)


async def afinish(loop: RunLoop, exc: BaseException | None = None) -> None:
    """Async twin of :func:`finish`."""
    if loop.trace is not None:
        method, arg = _outcome(loop, exc)
        await getattr(loop.trace.run, method)(arg)


# -- node runs -------------------------------------------------------------------------------


def in_scope(task: Task) -> bool:
    """Whether ``task``'s attempt already runs inside its node run."""
    return _SCOPE.get() is task


def _node_manager(task: Task, manager_cls: Any) -> Any:
    config = task.config
    return manager_cls.configure(
        inheritable_callbacks=config.get("callbacks"),
        inheritable_tags=config.get("tags"),
        inheritable_metadata=config.get("metadata"),
    )


def _result(task: Task) -> Any:
    keys = task.run.graph.stream_keyset
    return {c: v for c, v in task.writes if c in keys}


def _enter(task: Task, run: Any) -> tuple[Any, ...]:
    """The node's config gets the node run's callbacks; the run is the current run tree."""
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers.langchain import LangChainTracer

    config = {k: v for k, v in task.config.items() if k != "run_name" and k != "run_id"}
    config["callbacks"] = run.get_child()
    task._config = config  # type: ignore[assignment]  # what get_config() and the node see
    tokens: list[Any] = [_SCOPE.set(task), var_child_runnable_config.set(config)]  # type: ignore[arg-type]
    tracer = next((h for h in run.handlers if isinstance(h, LangChainTracer)), None)
    tree = tracer.run_map.get(str(run.run_id)) if tracer is not None else None
    if tree is not None:
        from langsmith.run_helpers import tracing_context

        cm = tracing_context(parent=tree)
        cm.__enter__()
        tokens.append(cm)
    return tuple(tokens)


def _exit(task: Task, tokens: tuple[Any, ...]) -> None:
    from langchain_core.runnables.config import var_child_runnable_config

    task._config = None  # a retry's run starts from the step's callbacks again
    if len(tokens) == 3:
        tokens[2].__exit__(None, None, None)
    var_child_runnable_config.reset(tokens[1])
    _SCOPE.reset(tokens[0])


def attempt_sync(task: Task, attempt: Callable[[Task], None]) -> None:
    """Run one attempt of ``task`` as a child run of the graph's run."""
    from langchain_core.callbacks.manager import CallbackManager

    run = _node_manager(task, CallbackManager).on_chain_start(None, task.input, name=task.name)
    tokens = _enter(task, run)
    try:
        attempt(task)
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    finally:
        _exit(task, tokens)
    run.on_chain_end(_result(task))


async def attempt_async(task: Task, attempt: Callable[[Task], Awaitable[None]]) -> None:
    """Async twin of :func:`attempt_sync`."""
    from langchain_core.callbacks.manager import AsyncCallbackManager

    manager = _node_manager(task, AsyncCallbackManager)
    run = await manager.on_chain_start(None, task.input, name=task.name)
    tokens = _enter(task, run)
    try:
        await attempt(task)
    except BaseException as exc:
        await run.on_chain_error(exc)
        raise
    finally:
        _exit(task, tokens)
    await run.on_chain_end(_result(task))
