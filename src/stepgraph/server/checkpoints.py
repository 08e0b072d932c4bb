"""Copying a thread's checkpoints (``threads.copy``), dropping one run's (``rollback``) and
keeping only the latest (``threads.prune`` / the TTL strategy ``keep_latest``).

Savers expose no per-checkpoint delete, so both work by listing every checkpoint of the
thread (all namespaces), oldest first, and putting the kept ones (with their pending
writes) under the target thread id; rollback deletes the thread's checkpoints first.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

__all__ = ["copy_checkpoints", "drop_run_checkpoints", "keep_latest_checkpoints"]


async def _all(saver: Any, thread_id: str) -> list[Any]:
    tuples = [t async for t in saver.alist({"configurable": {"thread_id": thread_id}})]
    tuples.sort(key=lambda t: t.checkpoint["id"])
    return tuples


async def _put_all(saver: Any, tuples: list[Any], thread_id: str, *, parents: bool = True) -> None:
    for t in tuples:
        conf = t.config["configurable"]
        target: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": conf.get("checkpoint_ns", "")}
        if parents and t.parent_config:
            target["checkpoint_id"] = t.parent_config["configurable"]["checkpoint_id"]
        metadata = dict(t.metadata or {})
        if "thread_id" in metadata:
            metadata["thread_id"] = thread_id
        saved = await saver.aput({"configurable": target}, t.checkpoint, metadata,
                                 dict(t.checkpoint.get("channel_versions") or {}))
        by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        for task_id, channel, value in t.pending_writes or ():
            by_task[task_id].append((channel, value))
        for task_id, writes in by_task.items():
            await saver.aput_writes(saved, writes, task_id)


async def copy_checkpoints(saver: Any, source: str, target: str) -> int:
    """Copy every checkpoint of thread ``source`` to thread ``target``; returns how many."""
    tuples = await _all(saver, source)
    await _put_all(saver, tuples, target)
    return len(tuples)


async def drop_run_checkpoints(saver: Any, thread_id: str, run_id: str) -> int:
    """Delete the checkpoints that run ``run_id`` wrote on ``thread_id``; returns how many."""
    tuples = await _all(saver, thread_id)
    keep = [t for t in tuples if (t.metadata or {}).get("run_id") != run_id]
    dropped = len(tuples) - len(keep)
    if dropped:
        await saver.adelete_thread(thread_id)
        await _put_all(saver, keep, thread_id)
    return dropped


async def keep_latest_checkpoints(saver: Any, thread_id: str) -> int:
    """Keep the latest checkpoint of each namespace of ``thread_id`` (with its pending writes,
    without its now missing parent) and delete the others; returns how many were deleted."""
    tuples = await _all(saver, thread_id)
    latest: dict[str, Any] = {}
    for t in tuples:
        latest[t.config["configurable"].get("checkpoint_ns", "")] = t
    dropped = len(tuples) - len(latest)
    if dropped:
        await saver.adelete_thread(thread_id)
        await _put_all(saver, list(latest.values()), thread_id, parents=False)
    return dropped
