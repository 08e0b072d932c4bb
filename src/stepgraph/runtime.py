"""``Runtime``: what a node can reach besides its state (context, store, stream writer)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from stepgraph.engine.context import current_task

__all__ = ["ExecutionInfo", "Runtime", "ServerInfo", "get_runtime", "server_info_from"]

ContextT = TypeVar("ContextT")


def _noop_writer(_chunk: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Identity of the running task attempt."""

    checkpoint_id: str | None = None
    checkpoint_ns: str = ""
    task_id: str = ""
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None


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
        previous: the previous return value of an ``entrypoint`` on this thread.
        execution_info: ids of the running task.
        server_info: the server's assistant, graph and authenticated user (``None`` outside one).
    """

    context: ContextT = None  # type: ignore[assignment]
    store: Any = None
    stream_writer: Any = _noop_writer
    previous: Any = None
    execution_info: ExecutionInfo = field(default_factory=ExecutionInfo)
    server_info: ServerInfo | None = None

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
            previous=other.previous if other.previous is not None else self.previous,
            execution_info=other.execution_info,
            server_info=other.server_info or self.server_info,
        )

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)

    def heartbeat(self) -> None:
        """Tell the engine the node is making progress (refreshes ``idle_timeout``)."""
        task = current_task()
        if task is not None:
            task.touch()


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The ``Runtime`` of the task running now."""
    task = current_task()
    if task is None:
        raise RuntimeError("Called get_runtime outside of a runnable context")
    return task.runtime
