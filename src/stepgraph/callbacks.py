"""Graph lifecycle callbacks: be told when a run pauses on an interrupt and when it resumes.

Subclass ``GraphCallbackHandler`` and pass an instance in ``config["callbacks"]`` (alone,
in a list, or added to a langchain callback manager)::

    class Audit(GraphCallbackHandler):
        def on_interrupt(self, event: GraphInterruptEvent) -> None:
            log.info("paused at %s: %s", event.checkpoint_id, event.interrupts)

    graph.invoke(inputs, {"configurable": {"thread_id": "1"}, "callbacks": [Audit()]})

With langchain-core installed, a ``GraphCallbackHandler`` is a langchain
``BaseCallbackHandler``, so it also receives the run's ``on_chain_start`` /
``on_chain_end`` / ``on_chain_error`` (the graph's start, end and failure, and its nodes').
A handler that raises does not stop the run (the error is logged) unless its
``raise_error`` is true. Handlers that are not ``GraphCallbackHandler`` get no lifecycle
events. Importing this module imports langchain-core when it is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from uuid import UUID

from stepgraph.types import Interrupt

__all__ = [
    "AsyncGraphCallbackManager",
    "GraphCallbackHandler",
    "GraphCallbackManager",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
]

logger = logging.getLogger(__name__)

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]
"""The run's status when a lifecycle event was taken."""


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The run paused: on ``interrupt()`` calls, or at an ``interrupt_before/after`` node."""

    run_id: UUID | None
    """The graph run's id (its langchain run id), if known."""
    status: GraphLifecycleStatus
    checkpoint_id: str
    """The checkpoint the run paused at."""
    checkpoint_ns: tuple[str, ...]
    """The graph's namespace (``()`` for the root graph)."""
    interrupts: tuple[Interrupt, ...]
    """The pending interrupts (empty at a static breakpoint)."""


@dataclass(frozen=True)
class GraphResumeEvent:
    """The run continues a thread from a saved checkpoint (``None`` or ``Command`` input)."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    """The checkpoint the run resumed from."""
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent


def _handler_base() -> type:
    try:
        from langchain_core.callbacks import BaseCallbackHandler
    except ImportError:
        return _PlainHandler
    return BaseCallbackHandler


class _PlainHandler:
    """The base of ``GraphCallbackHandler`` when langchain-core is not installed."""

    raise_error: bool = False
    run_inline: bool = False


class GraphCallbackHandler(_handler_base()):  # type: ignore[misc]
    """Base class of handlers told about a graph run's lifecycle (override what you need)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused on one or more interrupts (may be ``async def``)."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run resumed from a saved checkpoint (may be ``async def``)."""


def graph_handlers(callbacks: Any) -> list[GraphCallbackHandler]:
    """The ``GraphCallbackHandler``s among ``callbacks`` (a handler, a list of handlers, or a
    callback manager), in order and without duplicates."""
    if callbacks is None:
        return []
    if isinstance(callbacks, GraphCallbackHandler):
        return [callbacks]
    if isinstance(callbacks, (GraphCallbackManager, AsyncGraphCallbackManager)):
        return list(callbacks.handlers)
    if hasattr(callbacks, "handlers") and hasattr(callbacks, "inheritable_handlers"):
        found = [*callbacks.handlers, *callbacks.inheritable_handlers]
    elif isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        found = list(callbacks)
    else:
        raise TypeError(
            f"callbacks must be a handler, a list of handlers or a callback manager, "
            f"got {type(callbacks).__name__}"
        )
    out: list[GraphCallbackHandler] = []
    for handler in found:
        if isinstance(handler, GraphCallbackHandler) and handler not in out:
            out.append(handler)
    return out


class _Manager:
    __slots__ = ("handlers", "inheritable_handlers", "run_id")

    def __init__(
        self,
        handlers: Sequence[Any] | None = None,
        inheritable_handlers: Sequence[Any] | None = None,
        *,
        run_id: UUID | None = None,
    ) -> None:
        self.handlers: list[Any] = list(handlers or ())
        self.inheritable_handlers: list[Any] = list(inheritable_handlers or ())
        self.run_id = run_id

    def add_handler(self, handler: Any, inherit: bool = True) -> None:
        """Add ``handler`` (any handler is accepted; only graph handlers get events)."""
        if handler not in self.handlers:
            self.handlers.append(handler)
        if inherit and handler not in self.inheritable_handlers:
            self.inheritable_handlers.append(handler)

    def remove_handler(self, handler: Any) -> None:
        if handler in self.handlers:
            self.handlers.remove(handler)
        if handler in self.inheritable_handlers:
            self.inheritable_handlers.remove(handler)

    def copy(self, *, run_id: UUID | None = None) -> Any:
        return type(self)(self.handlers, self.inheritable_handlers,
                          run_id=run_id if run_id is not None else self.run_id)

    @classmethod
    def configure(cls, callbacks: Any = None, *, run_id: UUID | None = None) -> Any:
        """A manager of the graph handlers among ``callbacks``, bound to ``run_id``."""
        found = graph_handlers(callbacks)
        return cls(found, found, run_id=run_id)

    def _receivers(self) -> list[Any]:
        return [h for h in self.handlers if isinstance(h, GraphCallbackHandler)]


def _failed(handler: Any, method: str, exc: BaseException) -> None:
    if getattr(handler, "raise_error", False):
        raise exc
    logger.warning("Error in %s.%s callback: %r", type(handler).__name__, method, exc)


def _run_coroutine(coro: Any) -> None:
    """Finish a coroutine from sync code (a thread of its own if a loop runs here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    box: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box.append(exc)

    worker = threading.Thread(target=run, name="graph-callback")
    worker.start()
    worker.join()
    if box:
        raise box[0]


class GraphCallbackManager(_Manager):
    """Calls the graph handlers' lifecycle methods (sync; async methods are run to the end)."""

    __slots__ = ()

    def _dispatch(self, method: str, event: GraphLifecycleEvent) -> None:
        for handler in self._receivers():
            try:
                result = getattr(handler, method)(event)
                if inspect.isawaitable(result):
                    _run_coroutine(result)
            except Exception as exc:
                _failed(handler, method, exc)

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self._dispatch("on_interrupt", event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self._dispatch("on_resume", event)


class AsyncGraphCallbackManager(_Manager):
    """Async twin of ``GraphCallbackManager`` (sync handler methods are called inline)."""

    __slots__ = ()

    @property
    def is_async(self) -> bool:
        return True

    async def _dispatch(self, method: str, event: GraphLifecycleEvent) -> None:
        for handler in self._receivers():
            try:
                result = getattr(handler, method)(event)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                _failed(handler, method, exc)

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        await self._dispatch("on_interrupt", event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        await self._dispatch("on_resume", event)


_GraphCallbackManager = GraphCallbackManager
_AsyncGraphCallbackManager = AsyncGraphCallbackManager


def get_sync_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> GraphCallbackManager:
    """The graph handlers of ``config["callbacks"]``, bound to ``run_id``."""
    return GraphCallbackManager.configure((config or {}).get("callbacks"), run_id=run_id)


def get_async_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> AsyncGraphCallbackManager:
    """Async twin of ``get_sync_graph_callback_manager_for_config``."""
    return AsyncGraphCallbackManager.configure((config or {}).get("callbacks"), run_id=run_id)
