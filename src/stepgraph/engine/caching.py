"""``CachePolicy`` in the engine: look up a step's cacheable tasks, store successful results.

A hit gives the task its cached writes, so it does not run. Pure: the loop returns
``CacheGet``/``CacheSet`` effects and the driver talks to the cache (``aget``/``aset`` in
async runs). Only tasks that finished
without error or interrupt are stored (LangGraph can cache a failure and then silently
skip the node).

A functional-API ``@task`` call is cached the same way, under its own key
(``call_key``): ``call_lookup`` and ``call_entry`` make the effects, which the call
performs itself (``policy.perform_call``/``aperform_call``), since calls run inside their
caller's task, not in the driver.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stepgraph.engine.effects import NONE, CacheGet, CacheSet, Effects

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

CACHE_NS = "__pregel_ns_writes"


def _ident(node: Any) -> str:
    if node.bound:
        fn = getattr(node.bound[0], "func", None)
        if fn is not None and hasattr(fn, "__qualname__"):
            return f"{fn.__module__}.{fn.__qualname__}"
    return "__dynamic__"


def node_namespace(node: Any, name: str) -> tuple[str, ...]:
    """The cache namespace of a node: ``(__pregel_ns_writes, module.qualname, name)``."""
    return (CACHE_NS, _ident(node), name)


def task_namespace(node: Any) -> tuple[str, ...]:
    """The cache namespace of a ``@task`` function: ``(__pregel_ns_writes, module.qualname)``
    (what its ``clear_cache`` clears)."""
    return (CACHE_NS, _ident(node))


def cache_key(node: Any, name: str, value: Any) -> tuple[tuple[str, ...], str]:
    raw = node.cache_policy.key_func(value)
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    return node_namespace(node, name), hashlib.blake2b(data, digest_size=16).hexdigest()


def lookups(loop: RunLoop, tasks: list[Task]) -> list[tuple[Task, Any]]:
    """The tasks of a step to look up in the graph's cache, with their keys (pure: the
    driver performs the lookup, a ``CacheGet`` effect)."""
    if loop.graph.cache is None:
        return []
    return [
        (t, cache_key(t.node, t.name, t.input))
        for t in tasks
        if t.node.cache_policy is not None and not t.writes and not t.cached_done
    ]


def apply_hits(todo: list[tuple[Task, Any]], found: Mapping[Any, Any]) -> list[Task]:
    """Give the tasks found in the cache their cached writes; returns those tasks."""
    hits = []
    for task, key in todo:
        if key in found:
            task.writes = [tuple(w) for w in found[key]]  # type: ignore[misc]
            task.cached = True
            task.cached_done = True
            hits.append(task)
    return hits


def result_entry(loop: RunLoop, task: Task) -> dict[Any, tuple[Any, int | None]] | None:
    """What to remember of a finished task (a ``CacheSet`` effect's entries): its writes
    under its cache key when it succeeded, else ``None``."""
    policy = task.node.cache_policy
    if loop.graph.cache is None or policy is None or task.cached or task.error is not None or (
        task.paused
    ):
        return None
    key = cache_key(task.node, task.name, task.input)
    return {key: ([list(w) for w in task.writes], policy.ttl)}


def call_key(node: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """The cache key of a ``@task`` call: its namespace and a hash of its arguments."""
    raw = node.cache_policy.key_func(*args, **kwargs)
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    return task_namespace(node), hashlib.blake2b(data, digest_size=16).hexdigest()


def call_lookup(call: Task) -> tuple[CacheGet, list[Any]] | None:
    """The lookup of a ``@task`` call with a ``CachePolicy`` (``None`` without one, or
    when the graph has no cache), and the list its cached value lands in on a hit."""
    cache = call.run.graph.cache
    if cache is None or call.node.cache_policy is None:
        return None
    args, kwargs = call.input
    key = call_key(call.node, args, kwargs)
    hit: list[Any] = []

    def then(found: Mapping[Any, Any]) -> Effects:
        if key in found:
            hit.append(found[key])
        return NONE

    return CacheGet(cache, [key], then), hit


def call_entry(call: Task, value: Any) -> Effects:
    """Remember a finished ``@task`` call's return value (a ``CacheSet``), when cached."""
    cache = call.run.graph.cache
    policy = call.node.cache_policy
    if cache is None or policy is None:
        return NONE
    args, kwargs = call.input
    return (CacheSet(cache, {call_key(call.node, args, kwargs): (value, policy.ttl)}),)
