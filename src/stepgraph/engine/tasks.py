"""``Task``: one node execution planned for a superstep, and the writes it produced."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepgraph.constants import NS_END, NS_SEP
from stepgraph.engine.ids import path_sort_key, task_id

if TYPE_CHECKING:
    from stepgraph.config import RunnableConfig
    from stepgraph.engine.loop import RunLoop as RunContext
    from stepgraph.engine.node import PregelNode
    from stepgraph.runtime import Runtime
    from stepgraph.types import Interrupt, RetryPolicy, TimeoutPolicy

TaskPath = tuple[Any, ...]


class Task:
    """One node run in one step. Plain data plus the write buffer the node fills.

    Attributes:
        id: deterministic id (hash of checkpoint id, namespace, step, node, path).
        name: the node's name.
        path: ``("__pregel_pull", name)`` or ``("__pregel_push", index, False)``.
        input: what the node receives (state dict, ``Send.arg``, model instance...).
        node: the compiled node (callable + writers + policies).
        triggers: channels whose change planned this task.
        writes: ``(channel, value)`` pairs produced so far.
        run: the shared per-run context (channels, stream, store, ...).
    """

    __slots__ = (
        "_id",
        "_id_parts",
        "name",
        "path",
        "input",
        "node",
        "triggers",
        "writes",
        "run",
        "step",
        "timeout",
        "error",
        "interrupts",
        "paused",
        "resume",
        "interrupt_counter",
        "attempt",
        "_config",
        "_runtime",
        "last_progress",
        "cached",
        "subgraph_calls",
        "sort_key",
        "cached_done",
        "call_counter",
        "pending_calls",
        "bubbled",
        "handled_error",
        "label",
        "first_attempt_time",
        "handler_due",
        "held_for_handler",
    )

    def __init__(
        self,
        id: str | None,
        name: str,
        path: TaskPath,
        input: Any,
        node: PregelNode,
        triggers: tuple[str, ...],
        run: RunContext,
        step: int,
        timeout: TimeoutPolicy | None = None,
        sort_key: str | None = None,
        id_parts: tuple[str | int, ...] = (),
    ) -> None:
        self._id = id
        self._id_parts = id_parts
        """With ``id`` ``None``: what ``task_id`` hashes into the id, made on first read (a
        run without a checkpointer mostly never reads it: the planner keys its tasks by
        their path's sort key then)."""
        self.name = name
        self.path = path
        self.input = input
        self.node = node
        self.triggers = triggers
        self.run = run
        self.step = step
        self.timeout = timeout
        self.writes: list[tuple[str, Any]] = []
        self.error: BaseException | None = None
        self.interrupts: tuple[Interrupt, ...] = ()
        self.paused = False
        """Stopped by ``GraphInterrupt``: its own ``interrupt()``, or a subgraph that paused
        (``interrupts`` is empty when the subgraph stopped at a static breakpoint)."""
        self.resume: list[Any] = []
        self.interrupt_counter = 0
        self.attempt = 1
        self._config: RunnableConfig | None = None
        self._runtime: Runtime[Any] | None = None
        self.last_progress = 0.0
        self.cached = False
        self.subgraph_calls = 0
        self.sort_key = path_sort_key(path) if sort_key is None else sort_key
        """``path_sort_key(path)`` (a planner that knows it passes it)."""
        self.cached_done = False
        self.call_counter = 0
        self.pending_calls: list[Any] = []
        self.bubbled = False
        self.handled_error: Any = None
        self.label: str | None = None
        self.first_attempt_time: float | None = None
        self.handler_due: BaseException | None = None
        """The node already failed in an earlier run: only its error handler runs now."""
        self.held_for_handler = False
        """The node failed and the run pauses before its handler (``interrupt_before``)."""

    def __repr__(self) -> str:
        return f"Task(name={self.name!r}, id={self.id!r}, path={self.path!r})"

    # -- identity ---------------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The deterministic task id (``engine.ids.task_id`` of its parts)."""
        made = self._id
        if made is None:
            made = self._id = task_id(*self._id_parts)
        return made

    @property
    def ns(self) -> str:
        """This task's checkpoint namespace: ``parent_ns|name:id`` (``name:id`` at the root)."""
        own = f"{self.name}{NS_END}{self.id}"
        parent = self.run.checkpoint_ns
        return f"{parent}{NS_SEP}{own}" if parent else own

    @property
    def retry_policy(self) -> tuple[RetryPolicy, ...]:
        return self.node.retry_policy or self.run.retry_policy

    # -- what user code reaches -------------------------------------------------------------
    @property
    def config(self) -> RunnableConfig:
        if self._config is None:
            self._config = self.run.task_config(self)
        return self._config

    @property
    def runtime(self) -> Runtime[Any]:
        if self._runtime is None:
            self._runtime = self.run.task_runtime(self)
        return self._runtime

    def write_custom(self, chunk: Any) -> None:
        """The ``custom`` stream writer of this task."""
        self.touch()
        self.run.emit_custom(self, chunk)

    def touch(self) -> None:
        """Record progress (for ``idle_timeout``)."""
        self.last_progress = time.monotonic()

    def reset_attempt(self) -> None:
        """Forget a failed attempt's writes before retrying."""
        self.writes.clear()
        self.error = None
        self.interrupt_counter = 0
        self.attempt += 1
        self._runtime = None


TaskCallback = Callable[[Task], None]
