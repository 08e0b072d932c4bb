"""Which node bodies a timeout can stop: only natively async ones.

Sync Python code cannot be cancelled in-process (a timed-out thread would keep running),
so, as in LangGraph, a ``timeout`` on a sync node, task or entrypoint is refused with a
``ValueError`` when the graph is declared, compiled or validated, and at run time for a
timed task whose body is sync (a ``Send(timeout=...)`` to a sync node).
"""

from __future__ import annotations

from typing import Any

from stepgraph.engine.callable import NodeFunction, RunnableNode

__all__ = ["check_node_timeouts", "natively_async", "sync_timeout_error"]

_PREFIX = (
    "Node timeouts are only supported for async nodes because sync Python execution "
    "cannot be safely cancelled in-process."
)


def sync_timeout_error(name: str, kind: str = "Node") -> ValueError:
    """The error for a ``timeout`` on a sync node (``kind="Task"`` for a ``@task``)."""
    return ValueError(f"{_PREFIX} {kind} {name!r} is sync. Make it `async def`, or drop the "
                      "timeout.")


def natively_async(body: Any) -> bool:
    """True when ``body`` (a node step) runs as a coroutine that a timeout can cancel."""
    if isinstance(body, NodeFunction):
        return body.is_async
    if isinstance(body, RunnableNode):
        return _runnable_async(body.runnable)
    return bool(getattr(body, "is_async", False))


def _runnable_async(runnable: Any) -> bool:
    while _is_binding(runnable):
        runnable = runnable.bound
    steps = _steps(runnable)
    if steps is not None:
        return all(_runnable_async(step) for step in steps)
    lam = _langchain_class("RunnableLambda")
    if lam is not None and isinstance(runnable, lam):
        return bool(getattr(runnable, "afunc", None))
    if not callable(getattr(type(runnable), "ainvoke", None)):
        return False
    base = _langchain_runnable()
    if base is not None and isinstance(runnable, base):
        return type(runnable).ainvoke is not base.ainvoke  # the default runs invoke in a thread
    return True


def _is_binding(runnable: Any) -> bool:
    base = _langchain_class("RunnableBindingBase")
    return base is not None and isinstance(runnable, base)


def _steps(runnable: Any) -> list[Any] | None:
    sequence = _langchain_class("RunnableSequence")
    if sequence is not None and isinstance(runnable, sequence):
        return list(runnable.steps)
    parallel = _langchain_class("RunnableParallel")
    if parallel is not None and isinstance(runnable, parallel):
        return list(runnable.steps__.values())
    return None


def _langchain_runnable() -> Any:
    return _langchain_class("Runnable")


def _langchain_class(name: str) -> Any:
    import sys

    module = sys.modules.get("langchain_core.runnables.base")  # imported only if the user did
    return getattr(module, name, None) if module is not None else None


def check_node_timeouts(nodes: dict[str, Any]) -> None:
    """Refuse a ``timeout`` on any node whose body has a sync step."""
    for name, node in nodes.items():
        if node.timeout is not None and not all(natively_async(b) for b in node.bound):
            raise sync_timeout_error(name)
