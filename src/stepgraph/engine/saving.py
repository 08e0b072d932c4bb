"""What a run asks its checkpointer to store, queued until the loop hands them over.

``SaveOps`` turns loop events (input applied, step applied, task finished) into saver
calls: ``put`` for checkpoints and ``put_writes`` for task writes; the loop returns them
as one ``Save`` effect per step for the driver (``engine/durability.py``) to store. Nothing is built when
there is no checkpointer and no stream mode needs checkpoints, so the in-memory fast path
pays nothing for durability.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from stepgraph._clock import utc_now_iso
from stepgraph.channels.untracked_value import UntrackedValue
from stepgraph.checkpoint.base import EXCLUDED_METADATA_KEYS as _EXCLUDED
from stepgraph.constants import NULL_TASK_ID, TASKS
from stepgraph.engine.apply import Touched
from stepgraph.engine.image import CheckpointImage
from stepgraph.engine.timetravel import ancestors
from stepgraph.errors import StepgraphError
from stepgraph.types import Send

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

Op = tuple[Any, ...]

Made = tuple[dict[str, Any], dict[str, Any], "str | None"]
"""A checkpoint just made: ``(checkpoint, metadata, parent checkpoint id)``."""


class SaveOps:
    """Pending saver calls of one run, in the order they must happen.

    A checkpoint is assembled from the ``CheckpointImage`` (``engine.image``), refreshed
    after each step from what ``apply_writes`` touched: a step costs what changed in it.
    Under ``durability="exit"`` nothing is assembled per step (unless checkpoints are
    streamed): the last checkpoint is assembled once, from the image, when the run ends.
    """

    __slots__ = (
        "_loop",
        "ops",
        "parent_id",
        "enabled",
        "needs_checkpoint",
        "loaded_id",
        "whole_delta",
        "_untracked",
        "image",
        "touched",
        "_deferred",
        "ts",
        "metadata",
        "_extras",
        "_last_config",
        "_exit_only",
        "_exit_writes",
    )

    def __init__(self, loop: RunLoop) -> None:
        self._loop = weakref.ref(loop)
        """(A weak reference: the loop holds this, so a strong reference back would make
        every finished run cyclic garbage, its channel values freed only by a full
        collection.)"""
        self.ops: list[Op] = []
        self.parent_id: str | None = None
        self.enabled = loop.checkpointer is not None
        self.needs_checkpoint = self.enabled
        self.loaded_id: str | None = None
        """The checkpoint the run started from (the parent of what ``durability="exit"`` stores)."""
        self.whole_delta = False
        """The next checkpoint stores every delta key whole (its writes cannot rebuild it)."""
        self._untracked: frozenset[str] | None = None
        self.image = CheckpointImage()
        self.touched: Touched | None = Touched() if self.enabled else None
        """Filled by the step's ``apply_writes``; the image refreshes only these. ``None``
        when no step's checkpoint is assembled (no checkpointer, or ``durability="exit"``
        with no checkpoint streamed): then nothing is tracked."""
        self._deferred: tuple[str, str, dict[str, Any], Collection[str] | None] | None = None
        """``durability="exit"``: (id, ts, metadata, updated channels) of the checkpoint
        to assemble at the end."""
        self.ts = ""
        """The time of the loop's current checkpoint (loaded or made; under
        ``durability="exit"`` a step's is only made at the end)."""
        self.metadata: dict[str, Any] = {}
        """The metadata of the loop's current checkpoint (as ``ts``)."""
        self._extras: tuple[Any, dict[str, str], dict[str, Any]] | None = None
        """``(config, parents, config metadata)``: what every checkpoint's metadata takes
        from the run's config, read once per config."""
        self._last_config: tuple[str | None, dict[str, Any]] | None = None
        """The last saver config made: a checkpoint's writes and its child's ``put`` name
        the same checkpoint (one config, as in LangGraph)."""
        self._exit_only: bool | None = None
        """Whether only the run's last checkpoint is ever made (``exit_only``, read once)."""
        self._exit_writes: list[tuple[str, str | Task, list[tuple[str, Any]], str]] = []
        """``exit_only``: the writes of the tasks finished since the last checkpoint, as
        ``(checkpoint id, task id or planned task, writes, task path)``; made into saver
        calls only at the end (those before a later checkpoint are never stored)."""

    @property
    def loop(self) -> RunLoop:
        """The run's loop (alive while it calls this; a method reads it once, then its
        attributes directly, which a ``weakref.proxy`` would make dearer)."""
        return self._loop()  # type: ignore[return-value]

    @property
    def saved_versions(self) -> dict[str, Any]:
        """The channel versions of the last checkpoint (do not change the map)."""
        return self.image.versions

    def restored(self, saved: Any) -> None:
        self.ts = saved.checkpoint.get("ts", "")
        self.metadata = dict(saved.metadata or {})
        self.loaded_id = saved.checkpoint.get("id")
        self.image.restored(saved.checkpoint.get("channel_versions", {}))
        self.parent_id = (saved.parent_config or {}).get("configurable", {}).get("checkpoint_id")

    def force(self) -> None:
        """Store the next checkpoint even without a checkpointer (``update_state`` hands
        its ops to the caller's saver)."""
        self.enabled = self.needs_checkpoint = True
        if self.touched is None:
            self.touched = Touched()
            self.image.valid = False

    @property
    def exit_only(self) -> bool:
        """``durability="exit"`` with no stream that shows checkpoints: only the last
        checkpoint is ever made (the durability and the stream modes are fixed for a run)."""
        only = self._exit_only
        if only is None:
            loop = self.loop
            modes = loop.sink.modes
            only = self._exit_only = (
                loop.durability == "exit" and "checkpoints" not in modes and "debug" not in modes
            )
            if only:
                self.touched = None
        return only

    def require_checkpointer(self, what: str) -> None:
        if not self.enabled:
            raise RuntimeError(f"Cannot use {what} without checkpointer")

    def take(self, *, final: bool = False) -> list[Op]:
        """The queued saver calls to perform now (``durability="exit"``: only at the end)."""
        if self.loop.durability == "exit":
            if not final:
                return []
            loop = self.loop
            if (
                loop.parent_task is not None
                and loop.graph.checkpointer is not True
                and (loop.status == "done")
            ):
                # A subgraph that finished keeps nothing: its parent's checkpoint holds the
                # result. (Interrupted or failed, or with its own history, it is saved.)
                self.ops = []
                self._exit_writes = []
                self._deferred = None
                return []
            return self._exit_ops()
        ops, self.ops = self.ops, []
        return ops

    def _exit_ops(self) -> list[Op]:
        """Only the last checkpoint (stored whole, its parent the checkpoint the run started
        from) and the writes after it."""
        ops, self.ops = self.ops, []
        if self._exit_writes:
            deferred, self._exit_writes = self._exit_writes, []
            ops.extend(
                self._writes_op(ckpt_id, _task_id(task), writes, path)
                for ckpt_id, task, writes, path in deferred
            )
        if self._deferred is not None:
            checkpoint_id, ts, metadata, updated = self._deferred
            self._deferred = None
            if not ts:  # deferred from a step: made now, from the channels as they are
                loop = self.loop
                ts = utc_now_iso()
                metadata = {**metadata, "parents": self._parents()}
                metadata.update(_config_metadata(loop.config))
                self.ts, self.metadata = ts, metadata
                self.image.rebuild(loop)
            ckpt = self._assemble(
                checkpoint_id, ts, sorted(updated) if updated is not None else None, whole_delta=True
            )
        else:  # checkpoints were streamed, so assembled per step: keep the last one
            last = max((i for i, op in enumerate(ops) if op[0] == "put"), default=None)
            if last is None:
                return ops
            ckpt, metadata = ops[last][2], ops[last][3]
            if self.loop.delta_keys:  # the steps between were not stored: store them whole
                values = {**ckpt["channel_values"], **self._delta_values(True)}
                ckpt = {**ckpt, "channel_values": values}
            ops = ops[last + 1 :]
        config = self._config(self.loaded_id)
        return [("put", config, ckpt, metadata, dict(ckpt["channel_versions"])), *ops]

    # -- checkpoints ------------------------------------------------------------------------
    def checkpoint(self, source: str, step: int, prev_id: str | None) -> Made | None:
        """A new checkpoint after the input or a step, at the id the loop just moved to
        (from ``prev_id``). Returns what was made (for the ``checkpoints`` stream), ``None``
        when nothing is stored."""
        if not self.needs_checkpoint:
            return None
        loop = self.loop
        exit_only = self.exit_only if loop.durability == "exit" else False
        if exit_only:
            # Only the last checkpoint is stored, assembled at the end: the writes queued
            # so far belong to this one's predecessors and are never stored.
            self.ops = []
            self._exit_writes = []
            self.parent_id = prev_id
            self.whole_delta = False
            if source == "loop":
                # Nothing of a step's checkpoint is stored or streamed: remember only what
                # the last one is; its time, metadata and values are made once, at the end.
                self.image.valid = False
                self._deferred = (
                    loop.checkpoint_id, "", {"source": source, "step": step}, loop.updated
                )
                return None
        ts = utc_now_iso()
        metadata = self._metadata(source, step)
        self.ts, self.metadata = ts, metadata
        image = self.image
        if source == "loop" and image.valid:
            new_versions = image.advance(loop, self.touched)
        else:  # the input, an update or a fork moved channels outside a step: read them all
            if self.touched is not None:
                self.touched.clear()
            new_versions = image.rebuild(loop)
        self.parent_id = prev_id
        if exit_only:
            self._deferred = (loop.checkpoint_id, ts, metadata, loop.updated)
            return None
        updated = sorted(loop.updated) if loop.updated is not None else None
        ckpt = self._assemble(
            loop.checkpoint_id,
            ts,
            updated,
            whole_delta=source in ("update", "fork") or self.whole_delta,
        )
        self.whole_delta = False
        versions = loop.versions
        for key in loop.delta_keys:  # stored whole now, though its version is older
            if key in ckpt["channel_values"]:
                new_versions[key] = versions[key]
        if self.enabled:
            self.ops.append(("put", self._config(prev_id), ckpt, metadata, new_versions))
        # Under durability="exit" only the last checkpoint is stored, its parent the one the
        # run started from: the streamed checkpoints name that parent too.
        parent = self.loaded_id if loop.durability == "exit" else prev_id
        return ckpt, metadata, parent

    def build(self, ts: str, *, whole_delta: bool = False) -> dict[str, Any]:
        """A checkpoint of the loop as it is now (reads every channel)."""
        loop = self.loop
        if self.touched is not None:
            self.touched.clear()
        self.image.rebuild(loop)
        updated = sorted(loop.updated) if loop.updated is not None else None
        return self._assemble(loop.checkpoint_id, ts, updated, whole_delta=whole_delta)

    def _assemble(
        self, checkpoint_id: str, ts: str, updated: list[str] | None, *, whole_delta: bool
    ) -> dict[str, Any]:
        """A checkpoint dict from the image (copies of its maps)."""
        loop = self.loop
        image = self.image
        values = dict(image.values)
        if loop.delta_keys:
            values.update(self._delta_values(whole_delta or self.whole_delta))
        if TASKS in values and self.untracked:
            values[TASKS] = [_without_untracked(v, self.untracked) for v in values[TASKS]]
        return {
            "v": 4,
            "id": checkpoint_id,
            "ts": ts,
            "channel_values": values,
            "channel_versions": dict(image.versions),
            "versions_seen": dict(image.seen),
            "updated_channels": updated,
        }

    def _delta_values(self, force: bool) -> dict[str, Any]:
        """The delta keys to store whole now: all of them with ``force``, else those whose
        ``snapshot_frequency`` is reached."""
        loop = self.loop
        out = {}
        for key in loop.delta_keys:
            ch = loop.channels.get(key)
            if (
                ch is not None
                and key in loop.versions
                and ch.is_available()
                and (force or ch.snapshot_due())
            ):
                out[key] = ch.get()
                ch.stored_whole()
        return out

    def task_writes(self, task: str | Task, writes: list[tuple[str, Any]], path: str) -> None:
        """Queue the ``put_writes`` of a task, given by its id or as the planned ``Task``.
        Under ``exit_only`` a planned task's id (a hash) is read only if its writes are
        stored, at the end: a step's tasks then need no id."""
        if not self.enabled:
            return
        checkpoint_id = self.loop.checkpoint_id
        if not checkpoint_id:
            return
        if self._exit_only:  # stored only if no checkpoint follows: made into a call then
            self._exit_writes.append((checkpoint_id, task, writes, path))
        else:
            self.ops.append(self._writes_op(checkpoint_id, _task_id(task), writes, path))

    def _writes_op(
        self, checkpoint_id: str, task_id: str, writes: list[tuple[str, Any]], path: str
    ) -> Op:
        """The ``put_writes`` call storing a task's writes (a copy of the list)."""
        if self.untracked:  # never stored: neither the writes nor inside a Send's argument
            untracked = self.untracked
            writes = [
                (c, _without_untracked(v, untracked) if c == TASKS else v)
                for c, v in writes
                if c not in untracked
            ]
        return ("put_writes", self._config(checkpoint_id), list(writes), task_id, path)

    @property
    def untracked(self) -> frozenset[str]:
        """The graph's ``UntrackedValue`` channels (whose values are never stored)."""
        if self._untracked is None:
            self._untracked = frozenset(
                k for k, ch in self.loop.graph.channels.items() if isinstance(ch, UntrackedValue)
            )
        return self._untracked

    def interrupted(self) -> None:
        """The step stopped on ``interrupt()``: its finished writes are already queued."""

    def interrupt_marker(self) -> None:
        """``interrupt_before/after`` fired: nothing extra to store (the checkpoint holds it)."""

    # -- helpers ----------------------------------------------------------------------------
    def _config(self, checkpoint_id: str | None) -> dict[str, Any]:
        last = self._last_config
        if last is not None and last[0] == checkpoint_id and checkpoint_id:
            return last[1]
        loop = self.loop
        configurable = {
            "thread_id": loop.configurable.get("thread_id"),
            "checkpoint_ns": loop.checkpoint_ns,
        }
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        config = {"configurable": configurable}
        self._last_config = (checkpoint_id, config)
        return config

    def _metadata(self, source: str, step: int) -> dict[str, Any]:
        """A new checkpoint's metadata: its source and step, its ``parents`` and the
        primitive values of the run's config (read once per config)."""
        config = self.loop.config
        extras = self._extras
        if extras is None or extras[0] is not config:
            extras = self._extras = (config, self._parents(), _config_metadata(config))
        _, parents, from_config = extras
        metadata = {"source": source, "step": step, "parents": dict(parents) if parents else {}}
        if from_config:
            metadata.update(from_config)
        return metadata

    def _parents(self) -> dict[str, str]:
        loop = self.loop
        return ancestors(loop.configurable.get("checkpoint_map"), loop.checkpoint_ns)




def _config_metadata(config: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source in (config.get("metadata") or {}, config.get("configurable") or {}):
        for k, v in source.items():
            if k.startswith("__") or k in _EXCLUDED:
                continue
            if isinstance(v, (str, int, float, bool)):
                out[k] = v.replace("\x00", "") if isinstance(v, str) else v
    return out


def _task_id(task: str | Task) -> str:
    return task if isinstance(task, str) else task.id


def _without_untracked(packet: Any, untracked: frozenset[str]) -> Any:
    """A ``Send`` whose dict argument no longer has the untracked keys (top level only)."""
    if not isinstance(packet, Send) or not isinstance(packet.arg, dict):
        return packet
    if not any(k in untracked for k in packet.arg):
        return packet
    arg = {k: v for k, v in packet.arg.items() if k not in untracked}
    return Send(packet.node, arg, timeout=packet.timeout)


def perform_sync(saver: Any, ops: list[Op]) -> None:
    """Run queued saver calls in order (sync drivers): in one transaction when the saver
    offers ``perform_batch`` (the SQL savers do), else, or if that fails, one by one, so
    the calls before a failing one are stored and its error is raised."""
    if len(ops) > 1 and hasattr(saver, "perform_batch"):
        try:
            saver.perform_batch(ops)
            return
        except Exception:  # noqa: BLE001 - redone one by one below, which raises it again
            pass
    for op in ops:
        if op[0] == "put":
            saver.put(op[1], op[2], op[3], op[4])
        elif _takes_task_path(type(saver), "put_writes"):
            saver.put_writes(op[1], op[2], op[3], op[4])
        else:  # a custom saver written to the older (config, writes, task_id) signature
            saver.put_writes(op[1], op[2], op[3])


async def perform_async(saver: Any, ops: list[Op]) -> None:
    """Run queued saver calls in order (async drivers); batched like ``perform_sync``."""
    if len(ops) > 1 and hasattr(saver, "aperform_batch"):
        try:
            await saver.aperform_batch(ops)
            return
        except Exception:  # noqa: BLE001 - redone one by one below, which raises it again
            pass
    for op in ops:
        if op[0] == "put":
            await saver.aput(op[1], op[2], op[3], op[4])
        elif _takes_task_path(type(saver), "aput_writes"):
            await saver.aput_writes(op[1], op[2], op[3], op[4])
        else:
            await saver.aput_writes(op[1], op[2], op[3])


@functools.lru_cache(maxsize=128)
def _takes_task_path(cls: type, method: str) -> bool:
    """Whether ``cls.method`` accepts a fourth positional argument (``task_path``)."""
    try:
        params = list(inspect.signature(getattr(cls, method)).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 5  # self, config, writes, task_id, task_path


__all__ = ["NULL_TASK_ID", "SaveOps", "StepgraphError", "perform_async", "perform_sync"]
