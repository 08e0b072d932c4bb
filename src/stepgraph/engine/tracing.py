"""Reporting a run to callback handlers: tracers (LangSmith, ``BaseTracer``s), plain langchain
handlers and ``GraphCallbackHandler``s.

Only a run whose config has callbacks of the user's (or with LangSmith tracing switched on:
``LANGSMITH_TRACING``, ``langsmith.tracing_context(enabled=True)``, inside a ``@traceable``)
gets a ``RunTracer``; the handlers stepgraph itself adds to stream ``messages``, ``tools`` or
``events`` are no reason to trace. Every other run pays one ``is None`` test per run and per
task attempt, and nothing here imports langchain.

With langchain-core installed, a traced run is one langchain chain run (the graph, named
``run_name`` or the graph's name, ``run_id`` from the config) whose children are one chain
run per node attempt (named after the node, tagged ``graph:step:<n>``, its input and return
value recorded), whose children are the functional-API task calls and whatever the node
calls with its config (models, tools, subgraphs). While a node (or task call) runs, its run
is the ambient langchain parent and LangSmith's current run tree
(``langsmith.get_current_run_tree()``, ``@traceable`` functions nest under it). A node's
``TracePolicy`` changes what tracers record for that node's run, never what other handlers
or the node see. Graph handlers are told when the run resumes and when the root run pauses.
"""

from __future__ import annotations

import copy
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Any

from stepgraph._logs import LazyLogger
from stepgraph.errors import GraphDrained
from stepgraph.messages._merge import langchain_available

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

logger = LazyLogger(__name__)

_ENV_SWITCHES = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2",
                 "LANGCHAIN_TRACING")
_LIFECYCLE_STATUS = {"interrupted": "pending"}


@cache
def _tracing_env() -> bool:
    """Tracing switched on by the environment (read once, as LangSmith does)."""
    return any(os.environ.get(k, "").lower() == "true" for k in _ENV_SWITCHES)


def _tracing_on() -> bool:
    """LangSmith tracing is enabled (checked without importing anything not loaded yet)."""
    if _tracing_env():
        return True
    if "langsmith" in sys.modules:
        from langsmith import utils

        try:
            if utils.tracing_is_enabled():  # tracing_context(enabled=...), a current run tree
                return True
        except Exception:  # noqa: BLE001 - an unexpected langsmith version: no tracing
            return False
    ctx = sys.modules.get("langchain_core.tracers.context")
    return ctx is not None and ctx.tracing_v2_callback_var.get() is not None


def _user_handlers(callbacks: Any) -> bool:
    """Whether ``callbacks`` (a handler, a list or a langchain manager) has handlers besides
    the ones stepgraph adds to stream ``messages`` / ``tools`` / ``events``."""
    if not callbacks:
        return False
    if isinstance(callbacks, (list, tuple)):
        handlers = callbacks
    elif hasattr(callbacks, "handlers"):
        handlers = [*callbacks.handlers, *getattr(callbacks, "inheritable_handlers", ())]
    else:
        handlers = [callbacks]
    return any(not getattr(h, "stepgraph_internal", False) for h in handlers)


def tracing_requested(config: dict[str, Any]) -> bool:
    """Whether a run with ``config`` reports to callback handlers (cheap: no imports)."""
    return _user_handlers(config.get("callbacks")) or _tracing_on()


class RunTracer:
    """The callback side of one run loop (see the module docstring)."""

    __slots__ = ("loop", "chains", "run", "graph", "is_async")

    def __init__(self, loop: RunLoop) -> None:
        self.loop = loop
        self.chains = langchain_available()
        self.run: Any = None
        self.graph: Any = None
        self.is_async = False

    # -- the graph run --------------------------------------------------------------------
    def _root_manager(self) -> Any:
        from langchain_core.callbacks import AsyncCallbackManager, CallbackManager

        config = self.loop.config
        cls = AsyncCallbackManager if self.is_async else CallbackManager
        manager = cls.configure(
            inheritable_callbacks=config.get("callbacks"),
            inheritable_tags=config.get("tags"),
            inheritable_metadata=config.get("metadata"),
        )
        if "ls_integration" not in manager.metadata:
            manager.add_metadata({"ls_integration": "langgraph"})
        return manager

    def _name(self) -> str:
        return self.loop.config.get("run_name") or self.loop.graph.name

    def _graph_manager(self, cls_name: str) -> Any:
        # lazy: langchain-core, traced runs only
        from stepgraph import callbacks as graph_callbacks

        cls = getattr(graph_callbacks, cls_name)
        run_id = getattr(self.run, "run_id", None) or self.loop.config.get("run_id")
        manager = cls.configure(self.loop.config.get("callbacks"), run_id=run_id)
        return manager if manager.handlers else None

    def start_sync(self) -> None:
        if self.chains:
            self.run = self._root_manager().on_chain_start(
                None, self.loop.input, name=self._name(), run_id=self.loop.config.get("run_id")
            )
        self.graph = self._graph_manager("GraphCallbackManager")

    async def start_async(self) -> None:
        self.is_async = True
        if self.chains:
            self.run = await self._root_manager().on_chain_start(
                None, self.loop.input, name=self._name(), run_id=self.loop.config.get("run_id")
            )
        self.graph = self._graph_manager("AsyncGraphCallbackManager")

    def end_sync(self, error: BaseException | None) -> None:
        error = error or self._drained()
        if self.graph is not None and error is None:
            event = self._interrupt_event()
            if event is not None:
                self.graph.on_interrupt(event)
        if self.run is not None:
            if error is None:
                self.run.on_chain_end(self.loop.output())
            else:
                self.run.on_chain_error(error)

    async def end_async(self, error: BaseException | None) -> None:
        error = error or self._drained()
        if self.graph is not None and error is None:
            event = self._interrupt_event()
            if event is not None:
                await self.graph.on_interrupt(event)
        if self.run is not None:
            if error is None:
                await self.run.on_chain_end(self.loop.output())
            else:
                await self.run.on_chain_error(error)

    def _drained(self) -> BaseException | None:
        if self.loop.status != "draining":
            return None

        control = self.loop.control
        return GraphDrained((control.drain_reason if control is not None else None) or "shutdown")

    # -- lifecycle events ---------------------------------------------------------------------
    def resume_event(self) -> Any:
        """The resume event to report after the input phase (``None``: not resuming)."""
        loop = self.loop
        if self.graph is None or not loop.resuming:
            return None
        # lazy: langchain-core, traced runs only
        from stepgraph.callbacks import GraphResumeEvent

        return GraphResumeEvent(run_id=self.graph.run_id, status="pending",
                                checkpoint_id=loop.checkpoint_id, checkpoint_ns=loop.ns)

    def _interrupt_event(self) -> Any:
        loop = self.loop
        if loop.parent_task is not None or loop.status not in (
            "interrupted", "interrupt_before", "interrupt_after"
        ):
            return None
        # lazy: langchain-core, traced runs only
        from stepgraph.callbacks import GraphInterruptEvent

        return GraphInterruptEvent(
            run_id=self.graph.run_id, status=_LIFECYCLE_STATUS.get(loop.status, loop.status),
            checkpoint_id=loop.checkpoint_id, checkpoint_ns=loop.ns,
            interrupts=tuple(loop.interrupts),
        )

    def resumed_sync(self) -> None:
        event = self.resume_event()
        if event is not None:
            self.graph.on_resume(event)

    async def resumed_async(self) -> None:
        event = self.resume_event()
        if event is not None:
            await self.graph.on_resume(event)

    # -- tasks ----------------------------------------------------------------------------
    def task_callbacks(self, step: int) -> Any:
        """The ``callbacks`` of a task config of step ``step``: children of the graph run,
        tagged ``graph:step:<step>`` as LangGraph tags them."""
        if self.run is None:
            return self.loop.config.get("callbacks")
        return self.run.get_child(f"graph:step:{step}")


# -- node attempts and task calls -------------------------------------------------------------


class ChildRun:
    """One traced node attempt or task call: its chain run, and the task config its body
    sees meanwhile (callbacks under that run)."""

    __slots__ = ("task", "run", "policy", "saved_config", "ambient", "langsmith")

    def __init__(self, task: Task, policy: Any) -> None:
        self.task = task
        self.policy = policy
        self.run: Any = None
        self.saved_config: Any = None
        self.ambient: Any = None
        self.langsmith: Any = None

    def _manager(self, config: dict[str, Any], is_async: bool) -> Any:
        from langchain_core.callbacks import AsyncCallbackManager, CallbackManager

        cls = AsyncCallbackManager if is_async else CallbackManager
        return cls.configure(
            inheritable_callbacks=config.get("callbacks"),
            inheritable_tags=config.get("tags"),
            inheritable_metadata=config.get("metadata"),
        )

    def _enter(self, run: Any) -> None:
        from langchain_core.runnables.config import var_child_runnable_config

        self.run = run
        task = self.task
        own = task.config
        self.saved_config = task._config
        inner = {k: v for k, v in own.items() if k != "run_name" and k != "run_id"}
        inner["callbacks"] = run.get_child()
        task._config = inner  # type: ignore[assignment]
        self.ambient = var_child_runnable_config.set(inner)  # type: ignore[arg-type]
        self.langsmith = _langsmith_parent(run)

    def close(self) -> None:
        if self.langsmith is not None:
            self.langsmith.__exit__(None, None, None)
            self.langsmith = None
        if self.ambient is not None:
            from langchain_core.runnables.config import var_child_runnable_config

            try:
                var_child_runnable_config.reset(self.ambient)
            except ValueError:  # reset from another context: the context ends with the task
                pass
            self.ambient = None
        self.task._config = self.saved_config

    # sync
    def start_sync(self, parent: dict[str, Any], name: str, inputs: Any) -> None:
        """Start the run under ``parent``'s callbacks (the task's own config for a node, the
        caller's for a task call)."""
        manager = self._manager(parent, False)
        recorded = _recorded(inputs, getattr(self.policy, "process_inputs", None))
        if recorded is inputs:
            run = manager.on_chain_start(None, inputs, name=name)
        else:
            real, tracers = _split(manager)
            run = real.on_chain_start(None, inputs, name=name)
            tracers.on_chain_start(None, recorded, name=name, run_id=run.run_id)
            run.handlers = manager.handlers
        self._enter(run)

    def end_sync(self, output: Any) -> None:
        recorded = _recorded(output, getattr(self.policy, "process_outputs", None))
        if recorded is output:
            self.run.on_chain_end(output)
        else:
            real, tracers = _split(self.run)
            tracers.on_chain_end(recorded)
            real.on_chain_end(output)

    def error_sync(self, error: BaseException) -> None:
        self.run.on_chain_error(error)

    # async
    async def start_async(self, parent: dict[str, Any], name: str, inputs: Any) -> None:
        manager = self._manager(parent, True)
        recorded = _recorded(inputs, getattr(self.policy, "process_inputs", None))
        if recorded is inputs:
            run = await manager.on_chain_start(None, inputs, name=name)
        else:
            real, tracers = _split(manager)
            run = await real.on_chain_start(None, inputs, name=name)
            await tracers.on_chain_start(None, recorded, name=name, run_id=run.run_id)
            run.handlers = manager.handlers
        self._enter(run)

    async def end_async(self, output: Any) -> None:
        recorded = _recorded(output, getattr(self.policy, "process_outputs", None))
        if recorded is output:
            await self.run.on_chain_end(output)
        else:
            real, tracers = _split(self.run)
            await tracers.on_chain_end(recorded)
            await real.on_chain_end(output)

    async def error_async(self, error: BaseException) -> None:
        await self.run.on_chain_error(error)


def node_run(task: Task) -> ChildRun | None:
    """A traced attempt of ``task``'s node (``None`` when the run has no chain tracing)."""
    tracer = task.run.tracer
    if tracer is None or tracer.run is None or task.node.hidden:
        return None
    return ChildRun(task, getattr(task.node, "trace_policy", None))


def call_run(sub: Task, caller: Task | None) -> tuple[ChildRun, dict[str, Any]] | None:
    """A traced functional-API task call and the caller config its run nests under."""
    tracer = sub.run.tracer
    if tracer is None or tracer.run is None or caller is None:
        return None
    return ChildRun(sub, None), caller.config


def call_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What a task call's run records as its input: the argument of a one-argument call."""
    if len(args) == 1 and not kwargs:
        return args[0]
    return {"args": list(args), **kwargs} if args else dict(kwargs)


def _langsmith_parent(run: Any) -> Any:
    """Make ``run`` LangSmith's current run tree while the body runs (so ``@traceable``
    functions and ``get_current_run_tree()`` nest under it); the entered context manager,
    or ``None`` when no LangSmith tracer follows the run."""
    if "langchain_core.tracers.langchain" not in sys.modules:
        return None
    from langchain_core.tracers.langchain import LangChainTracer

    tracer = next((h for h in run.handlers if isinstance(h, LangChainTracer)), None)
    tree = tracer.run_map.get(str(run.run_id)) if tracer is not None else None
    if tree is None:
        return None
    from langsmith.run_helpers import tracing_context

    context = tracing_context(parent=tree)
    context.__enter__()
    return context


def _recorded(value: Any, process: Any) -> Any:
    """``process(value)``, or ``value`` itself when there is no processor or it fails."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:  # noqa: BLE001 - trace processors fail open
        logger.debug("trace policy processor %r failed; recording the value as is", process,
                     exc_info=True)
        return value


def _split(manager: Any) -> tuple[Any, Any]:
    """Copies of ``manager``: one with the non-tracer handlers, one with the tracers."""
    from langchain_core.tracers.base import AsyncBaseTracer, BaseTracer

    kinds = (BaseTracer, AsyncBaseTracer)
    real, tracers = copy.copy(manager), copy.copy(manager)
    real.handlers = [h for h in manager.handlers if not isinstance(h, kinds)]
    tracers.handlers = [h for h in manager.handlers if isinstance(h, kinds)]
    return real, tracers
