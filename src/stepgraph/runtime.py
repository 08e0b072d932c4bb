"""``Runtime``: what a node can reach besides its state (context, store, stream writer, ...).

Also here: ``ExecutionInfo`` (ids of the running task attempt), ``ServerInfo`` (set when a
LangGraph-API server runs the graph) and ``RunControl``, a run's drain switch: after
``request_drain()`` the run stops at the next step boundary, its checkpoint saved, and
``invoke``/``stream`` raise ``GraphDrained`` (resume later with ``invoke(None, config)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from stepgraph._running import ambient_runtime, current_task

if TYPE_CHECKING:
    from stepgraph.store.base import BaseStore

__all__ = [
    "DEFAULT_RUNTIME",
    "ExecutionInfo",
    "RunControl",
    "Runtime",
    "ServerInfo",
    "get_runtime",
    "server_info_from",
]

ContextT = TypeVar("ContextT")


def _noop_writer(_chunk: Any) -> None:
    return None


def _touch_current_task() -> None:
    """The default ``heartbeat``: refresh the running task's ``idle_timeout`` (outside a
    running node, and for nodes without an idle timeout, it does nothing)."""
    task = current_task()
    if task is not None:
        task.touch()


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Identity of the running task attempt (read-only)."""

    checkpoint_id: str | None = None
    """The checkpoint the task's step started from."""
    checkpoint_ns: str = ""
    """The task's namespace, ``node:task_id`` (``parent|...`` inside subgraphs)."""
    task_id: str = ""
    thread_id: str | None = None
    """``None`` when the run has no thread (no checkpointer)."""
    run_id: str | None = None
    """The config's ``run_id``, if one was given."""
    node_attempt: int = 1
    """1 for the first attempt, 2 for the first retry, ..."""
    node_first_attempt_time: float | None = None
    """Unix time (seconds) when the first attempt started."""

    @property
    def idempotency_key(self) -> str:
        """``thread_id:checkpoint_id:task_id``: the same for every execution of this task.

        A task may execute more than once (a retry, a worker that died before the step
        committed and whose run another worker resumed from the last checkpoint); its step
        commits exactly once. The task id is derived from the checkpoint the step starts
        from, so every execution of the task gets this same key: pass it to external
        services as their idempotency key so their side effects happen once. This holds
        once that checkpoint is stored, which ``durability="sync"`` ensures before the
        step runs; under ``"async"`` a crash can lose the newest checkpoint, and its step
        then re-runs from a re-created one with a new key."""
        return f"{self.thread_id or ''}:{self.checkpoint_id or ''}:{self.task_id}"

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)


class RunControl:
    """A run's drain switch, safe to flip from any thread or task.

    ``request_drain(reason)`` asks the run to stop cooperatively: tasks already running
    finish, their step is checkpointed, no further step starts, and the call raises
    ``GraphDrained(reason)``. Use one ``RunControl`` per run; once drained it stays drained.
    """

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        self._drain_reason = reason  # one attribute store: atomic, no lock needed

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason

    def __repr__(self) -> str:
        return f"RunControl(drain_reason={self._drain_reason!r})"


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What a server running the graph tells it (``None`` outside a server), as in LangGraph.

    ``user`` is the authenticated user (``langgraph_sdk``'s ``BaseUser`` protocol:
    ``user.identity``, ``user["identity"]``) when the server has custom auth.
    """

    assistant_id: str
    graph_id: str
    user: Any = None


def server_info_from(configurable: dict[str, Any]) -> ServerInfo | None:
    """The ``ServerInfo`` of a run from its configurable keys (``assistant_id``, ``graph_id``,
    ``langgraph_auth_user``), ``None`` when there is none of them."""
    assistant_id, graph_id = configurable.get("assistant_id"), configurable.get("graph_id")
    user = configurable.get("langgraph_auth_user")
    if user is not None and not hasattr(user, "identity"):
        user = None
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(assistant_id=str(assistant_id or ""), graph_id=str(graph_id or ""), user=user)


@dataclass(frozen=True, slots=True)
class Runtime(Generic[ContextT]):
    """Injected as the ``runtime`` parameter of a node.

    Attributes:
        context: the run's ``context=`` value (coerced to ``context_schema``).
        store: the store given to ``compile(store=...)``, or ``None``.
        stream_writer: writes a chunk to the ``custom`` stream.
        heartbeat: call from long work to refresh the node's ``idle_timeout``.
        previous: the previous return value of an ``entrypoint`` on this thread.
        execution_info: ids of the running task attempt.
        server_info: the server's assistant, graph and authenticated user (``None`` outside one).
        control: the run's ``RunControl`` (``runtime.control.request_drain()``).
    """

    context: ContextT = None  # type: ignore[assignment]
    store: BaseStore | None = None
    stream_writer: Callable[[Any], None] = _noop_writer
    heartbeat: Callable[[], None] = _touch_current_task
    previous: Any = None
    execution_info: ExecutionInfo = field(default_factory=ExecutionInfo)
    server_info: ServerInfo | None = None
    control: RunControl | None = None

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """Fields of ``other`` win where they are set (truthy), as in LangGraph."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer
                if other.stream_writer is not _noop_writer
                else self.stream_writer
            ),
            heartbeat=(
                other.heartbeat if other.heartbeat is not _touch_current_task else self.heartbeat
            ),
            previous=other.previous if other.previous is not None else self.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy whose ``execution_info`` has the given fields replaced."""
        return replace(self, execution_info=self.execution_info.patch(**overrides))

    @property
    def drain_requested(self) -> bool:
        return self.control is not None and self.control.drain_requested

    @property
    def drain_reason(self) -> str | None:
        return self.control.drain_reason if self.control is not None else None


DEFAULT_RUNTIME: Runtime[Any] = Runtime()
"""The runtime outside any run: no context, no store, writers and heartbeat that do nothing."""


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The ``Runtime`` of the task running now."""
    task = current_task()
    if task is None:
        runtime = ambient_runtime()
        if isinstance(runtime, Runtime):  # LangGraph-style context set by langchain code
            return runtime
        raise RuntimeError("Called get_runtime outside of a runnable context")
    return task.runtime
