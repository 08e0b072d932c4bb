"""Time travel: which checkpoint a run (or one of its subgraphs) starts from.

A run given a ``checkpoint_id`` replays that checkpoint: it saves a ``fork`` of it and runs
its tasks again (a checkpoint made by ``update_state`` is a branch already and runs as is).
Subgraphs follow the parent's timeline:

* a subgraph whose namespace is in the config's ``checkpoint_map`` (a config taken from
  ``get_state(subgraphs=True)`` or returned by ``update_state`` on a subgraph) starts from
  exactly that checkpoint and replays it too; the root starts from ``checkpoint_map[""]``;
* otherwise, while the root replays, each subgraph namespace's *first* run starts from its
  latest checkpoint older than the replayed one (so a ``checkpointer=True`` subgraph sees
  the state it had at that point of the parent's history), applying its input afresh;
  later runs of the same subgraph (a loop) load their latest checkpoint as usual.

``RunLoop.where_to_start`` decides (pure, ``engine/start.py``); ``load_saved`` /
``aload_saved`` do the saver call it names.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from stepgraph.constants import NS_END, NS_SEP

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop


def recast_ns(ns: str) -> str:
    """``ns`` without task ids and call counters: a ``checkpointer=True`` subgraph's stable
    namespace (``outer:1f2e|inner:9ab0`` -> ``outer|inner``)."""
    return NS_SEP.join(part.split(NS_END, 1)[0] for part in ns.split(NS_SEP) if not part.isdigit())


def root_config(config: dict[str, Any]) -> dict[str, Any]:
    """A root run's config: one naming a subgraph's checkpoint addresses the root's own.

    ``checkpoint_ns`` is cleared; ``checkpoint_id`` becomes ``checkpoint_map[""]`` (the root
    checkpoint the subgraph's one belongs to) or, without a map, is dropped.
    """
    configurable = config.get("configurable") or {}
    if not configurable.get("checkpoint_ns"):
        return config
    configurable = {**configurable, "checkpoint_ns": ""}
    root_id = (configurable.get("checkpoint_map") or {}).get("")
    if root_id:
        configurable["checkpoint_id"] = root_id
    else:
        configurable.pop("checkpoint_id", None)
    return {**config, "configurable": configurable}


def with_checkpoint_map(config: dict[str, Any], metadata: Any) -> dict[str, Any]:
    """``config`` of a saved subgraph checkpoint plus the ``checkpoint_map`` that replays it
    (its ancestors' checkpoints, from ``metadata["parents"]``, and its own)."""
    parents = (metadata or {}).get("parents") if metadata else None
    if not parents:
        return config
    configurable = config["configurable"]
    own = {configurable.get("checkpoint_ns", ""): configurable.get("checkpoint_id")}
    return {**config, "configurable": {**configurable, "checkpoint_map": {**parents, **own}}}


def ancestors(checkpoint_map: dict[str, str] | None, ns: str) -> dict[str, str]:
    """The ``parents`` metadata of a checkpoint in ``ns``: the map's entries but its own and
    its descendants' (a root checkpoint has none)."""
    if not ns or not checkpoint_map:
        return {}
    below = ns + NS_SEP
    return {k: v for k, v in checkpoint_map.items() if k != ns and not k.startswith(below)}


class ReplayBound:
    """Shared by all subgraphs of one replaying root run: the replayed checkpoint's id, and
    the subgraph namespaces that already loaded their checkpoint from before it."""

    __slots__ = ("checkpoint_id", "_visited", "_lock")

    def __init__(self, checkpoint_id: str) -> None:
        self.checkpoint_id = checkpoint_id
        self._visited: set[str] = set()
        self._lock = threading.Lock()

    def first_visit(self, ns: str) -> bool:
        """True the first time the subgraph at ``ns`` runs (task ids ignored, so each turn
        of a loop counts as the same subgraph)."""
        stable = ns.rsplit(NS_END, 1)[0] if NS_END in ns else ns
        with self._lock:
            if stable in self._visited:
                return False
            self._visited.add(stable)
            return True


def _before(config: dict[str, Any], checkpoint_id: str) -> dict[str, Any]:
    return {"configurable": {"checkpoint_id": checkpoint_id}}


def load_saved(saver: Any, loop: RunLoop) -> Any:
    """The checkpoint tuple ``loop`` starts from (sync saver calls)."""
    config, before = loop.where_to_start()
    if before is None:
        return saver.get_tuple(config)
    for saved in saver.list(config, before=_before(config, before), limit=1):
        return saved
    return None


async def aload_saved(saver: Any, loop: RunLoop) -> Any:
    """Async twin of ``load_saved``."""
    config, before = loop.where_to_start()
    if before is None:
        return await saver.aget_tuple(config)
    async for saved in saver.alist(config, before=_before(config, before), limit=1):
        return saved
    return None
