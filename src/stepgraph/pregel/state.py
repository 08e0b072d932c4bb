"""Thread state API: ``get_state``, ``get_state_history``, ``update_state`` and async twins.

The logic is pure (``engine/snapshot.py``, ``engine/update.py``); these methods only load
and store through the saver, once with sync calls and once with ``a``-prefixed ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph.config import RunnableConfig, ensure_config
from stepgraph.engine.delta import aload_history, load_history
from stepgraph.engine.snapshot import snapshot
from stepgraph.engine.timetravel import recast_ns, with_checkpoint_map
from stepgraph.engine.update import acompute_update, compute_fork, compute_update
from stepgraph.errors import InvalidUpdateError, StepgraphError
from stepgraph.types import StateUpdate

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel
    from stepgraph.types import StateSnapshot

_COPY = "__copy__"


def _saver(graph: Pregel) -> Any:
    saver = graph.checkpointer
    if saver is None or isinstance(saver, bool):
        raise ValueError("No checkpointer set")
    return saver


def _config(graph: Pregel, config: Any) -> Any:
    config = ensure_config(graph.config, config)
    if "thread_id" not in (config.get("configurable") or {}):
        raise StepgraphError("The config has no 'thread_id'.", code="SG310",
                             hint='pass {"configurable": {"thread_id": "..."}}')
    return config


def _history_config(graph: Pregel, config: Any) -> Any:
    """History lists one namespace: the root's unless the config names a subgraph's."""
    config = _config(graph, config)
    configurable = {"checkpoint_ns": "", **config["configurable"]}
    return {**config, "configurable": configurable}


def _normalize(supersteps: Sequence[Sequence[Any]]) -> list[list[tuple[Any, Any, Any]]]:
    if not supersteps:
        raise ValueError("No supersteps provided")
    out = []
    for step in supersteps:
        if not step:
            raise ValueError("No updates provided")
        out.append([(u[0], u[1] if len(u) > 1 else None, u[2] if len(u) > 2 else None) for u in step])
    return out


class StateAPI:
    """Mixin of ``Pregel``: reading and changing a thread's saved state."""

    def get_state(self: Pregel, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:  # type: ignore[misc]
        """The state at the latest (or the given ``checkpoint_id``) checkpoint of a thread.

        With ``subgraphs=True`` each pending subgraph task carries the child's snapshot in
        ``tasks[i].state``. A config whose ``checkpoint_ns`` names a subgraph task reads
        that subgraph's state.
        """
        config = _config(self, config)
        return _read_state(_target(self, config), config, _saver(self), subgraphs)

    async def aget_state(self: Pregel, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:  # type: ignore[misc]
        """Async twin of ``get_state``."""
        config = _config(self, config)
        return await _aread_state(_target(self, config), config, _saver(self), subgraphs)

    def get_subgraphs(self: Pregel, *, namespace: str | None = None, recurse: bool = False) -> Iterator[tuple[str, Pregel]]:  # type: ignore[misc]
        """``(name, graph)`` of the compiled graphs used as nodes (``a|b`` when recursing)."""
        for name, node in self.nodes.items():
            for graph in node.subgraphs:
                if graph.checkpointer is False:
                    continue
                if namespace is not None and not (namespace == name or namespace.startswith(name + "|")):
                    continue
                if namespace is None or namespace == name:
                    yield name, graph
                if recurse or (namespace is not None and namespace != name):
                    rest = None if namespace is None or namespace == name else namespace[len(name) + 1:]
                    for child, sub in graph.get_subgraphs(namespace=rest, recurse=recurse):
                        yield f"{name}|{child}", sub

    async def aget_subgraphs(self: Pregel, *, namespace: str | None = None, recurse: bool = False) -> AsyncIterator[tuple[str, Pregel]]:  # type: ignore[misc]
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def get_state_history(  # type: ignore[misc]
        self: Pregel, config: RunnableConfig, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """Snapshots of a thread, newest first."""
        saver = _saver(self)
        config = _history_config(self, config)
        graph = _target(self, config)
        config = _stable_ns(graph, config)
        for saved in saver.list(config, filter=filter, before=before, limit=limit):
            yield snapshot(graph, config, saver, saved, apply_pending=False,
                           delta=load_history(saver, graph, saved))

    async def aget_state_history(  # type: ignore[misc]
        self: Pregel, config: RunnableConfig, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        saver = _saver(self)
        config = _history_config(self, config)
        graph = _target(self, config)
        config = _stable_ns(graph, config)
        async for saved in saver.alist(config, filter=filter, before=before, limit=limit):
            yield snapshot(graph, config, saver, saved, apply_pending=False,
                           delta=await aload_history(saver, graph, saved))

    def bulk_update_state(self: Pregel, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]) -> RunnableConfig:  # type: ignore[misc]
        """Apply several supersteps of updates; returns the config of the last checkpoint."""
        saver = _saver(self)
        cfg: Any = _config(self, config)
        steps = _normalize(supersteps)
        graph = _target(self, cfg)
        cfg = _stable_ns(graph, cfg)
        saved = saver.get_tuple(cfg)
        for updates in steps:
            if updates[0][1] == _COPY:  # a fork, then maybe an update of it
                result = _fork(saved, updates)
                cfg = with_checkpoint_map(saver.put(*result), result[2])
                saved = saver.get_tuple(cfg)
                updates = _after_fork(updates[0][0])
                if not updates:
                    continue
            result, task_writes = compute_update(graph, cfg, saver, saved, updates,
                                                 load_history(saver, graph, saved))
            for tid, writes in task_writes:
                if writes:
                    saver.put_writes(_own_config(saved), writes, tid)
            cfg = with_checkpoint_map(saver.put(*result), result[2])
            saved = saver.get_tuple(cfg)
        return cfg

    async def abulk_update_state(self: Pregel, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]) -> RunnableConfig:  # type: ignore[misc]
        saver = _saver(self)
        cfg: Any = _config(self, config)
        steps = _normalize(supersteps)
        graph = _target(self, cfg)
        cfg = _stable_ns(graph, cfg)
        saved = await saver.aget_tuple(cfg)
        for updates in steps:
            if updates[0][1] == _COPY:
                result = _fork(saved, updates)
                cfg = with_checkpoint_map(await saver.aput(*result), result[2])
                saved = await saver.aget_tuple(cfg)
                updates = _after_fork(updates[0][0])
                if not updates:
                    continue
            result, task_writes = await acompute_update(graph, cfg, saver, saved, updates,
                                                        await aload_history(saver, graph, saved))
            for tid, writes in task_writes:
                if writes:
                    await saver.aput_writes(_own_config(saved), writes, tid)
            cfg = with_checkpoint_map(await saver.aput(*result), result[2])
            saved = await saver.aget_tuple(cfg)
        return cfg

    def update_state(self: Pregel, config: RunnableConfig,  # type: ignore[misc]
                     values: dict[str, Any] | Any | None, as_node: str | None = None,
                     task_id: str | None = None) -> RunnableConfig:
        """Apply ``values`` as if ``as_node`` returned them; returns the new checkpoint's config."""
        return self.bulk_update_state(config, [[StateUpdate(values, as_node, task_id)]])

    async def aupdate_state(self: Pregel, config: RunnableConfig,  # type: ignore[misc]
                            values: dict[str, Any] | Any | None, as_node: str | None = None,
                            task_id: str | None = None) -> RunnableConfig:
        """Async twin of ``update_state``."""
        return await self.abulk_update_state(config, [[StateUpdate(values, as_node, task_id)]])


def _task_graph(graph: Pregel, task: Any) -> Any:
    node = graph.nodes.get(task.name)
    if node is None or not node.subgraphs:
        return None
    return node.subgraphs[0]


def _target(graph: Pregel, config: Any) -> Any:
    """The graph whose state a config addresses (a subgraph when it names one's namespace)."""
    ns = config["configurable"].get("checkpoint_ns") or ""
    child: Any = graph
    for segment in ns.split("|") if ns else ():
        name = segment.split(":", 1)[0]
        if name.isdigit():
            continue
        node = child.nodes.get(name)
        if node is None or not node.subgraphs:
            raise ValueError(f"Subgraph {name} not found")
        child = node.subgraphs[0]
    return child


def _stable_ns(graph: Pregel, config: Any) -> Any:
    """A ``checkpointer=True`` subgraph keeps one history: its namespace has no task ids."""
    if graph.checkpointer is not True:
        return config
    configurable = config["configurable"]
    return {**config, "configurable": {**configurable,
                                       "checkpoint_ns": recast_ns(configurable.get("checkpoint_ns", ""))}}


def _read_state(graph: Pregel, config: Any, saver: Any, subgraphs: bool) -> StateSnapshot:
    config = _stable_ns(graph, config)
    explicit = "checkpoint_id" in config["configurable"]
    saved = saver.get_tuple(config)
    snap = snapshot(graph, config, saver, saved, apply_pending=not explicit,
                    delta=load_history(saver, graph, saved))
    if not subgraphs:
        return snap
    tasks = []
    for t in snap.tasks:
        child = _task_graph(graph, t)
        if child is not None and isinstance(t.state, dict):
            t = t._replace(state=_read_state(child, t.state, saver, True))
        tasks.append(t)
    return snap._replace(tasks=tuple(tasks))


async def _aread_state(graph: Pregel, config: Any, saver: Any, subgraphs: bool) -> StateSnapshot:
    config = _stable_ns(graph, config)
    explicit = "checkpoint_id" in config["configurable"]
    saved = await saver.aget_tuple(config)
    snap = snapshot(graph, config, saver, saved, apply_pending=not explicit,
                    delta=await aload_history(saver, graph, saved))
    if not subgraphs:
        return snap
    tasks = []
    for t in snap.tasks:
        child = _task_graph(graph, t)
        if child is not None and isinstance(t.state, dict):
            t = t._replace(state=await _aread_state(child, t.state, saver, True))
        tasks.append(t)
    return snap._replace(tasks=tuple(tasks))


def _fork(saved: Any, updates: list[tuple[Any, Any, Any]]) -> Any:
    if len(updates) > 1:
        raise InvalidUpdateError("Cannot copy checkpoint with multiple updates", code="SG257",
                                 hint="apply __copy__ alone in its superstep; pass the updates to "
                                 "make on the copy as its values: [StateUpdate(values, as_node), ...]")
    return compute_fork(saved)


def _after_fork(values: Any) -> list[tuple[Any, Any, Any]]:
    """``__copy__`` given a list of updates: they are applied to the copy as one superstep,
    grouped by node (the n-th update of a node stands for the copy's n-th task of it)."""
    if not isinstance(values, (list, tuple)) or not values:
        return []
    by_node: dict[Any, list[tuple[Any, Any, Any]]] = {}
    for item in values:
        if not isinstance(item, (list, tuple)) or len(item) < 2:
            raise InvalidUpdateError(f"Invalid update item: {item!r} when copying checkpoint",
                                     code="SG258", hint="each item is StateUpdate(values, as_node)")
        by_node.setdefault(item[1], []).append(
            (item[0], item[1], item[2] if len(item) > 2 else None))
    return [u for group in by_node.values() for u in group]


def _own_config(saved: Any) -> dict[str, Any]:
    return {"configurable": dict(saved.config["configurable"])}
