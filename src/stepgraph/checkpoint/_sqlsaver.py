"""``SqlSaver``: the public saver API over the shared flows; subclasses only move bytes.

A subclass provides ``_transact(flow, write)`` (run a flow in one transaction and return its
result) and may override ``_atransact``, which by default runs ``_transact`` in a worker
thread. Every public method, sync and async, is a two-line shell around the same flow.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph.checkpoint import _flows as flows
from stepgraph.checkpoint._codec import ListQuery
from stepgraph.checkpoint._compact import CompactCodec
from stepgraph.checkpoint._flows import Flow, R
from stepgraph.checkpoint._sql import Dialect
from stepgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    string_versions,
    thread_target,
)

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["SqlSaver"]


class SqlSaver(BaseCheckpointSaver[str]):
    """A saver on a SQL database (see ``stepgraph.checkpoint._sql`` for the schema).

    The schema is migrated on first use (``setup()`` does it explicitly); after that no call
    checks the schema again.
    """

    dialect: Dialect

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._codec = CompactCodec(self.serde)
        self._ready = False

    # --- I/O, provided by subclasses ----------------------------------------------------
    def _transact(self, flow: Flow[R], write: bool) -> R:
        """Run ``flow`` in one transaction (``write``: it changes rows)."""
        raise NotImplementedError

    async def _atransact(self, flow: Flow[R], write: bool) -> R:
        """Async ``_transact``; by default the sync one in a worker thread."""
        return await asyncio.to_thread(self._transact, flow, write)

    def _run(self, flow: Flow[R], write: bool = False) -> R:
        if not self._ready:
            self._migrate()
        return self._transact(flow, write)

    async def _arun(self, flow: Flow[R], write: bool = False) -> R:
        if not self._ready:
            await self._amigrate()
        return await self._atransact(flow, write)

    def _migrate(self) -> None:
        self._transact(flows.migrate(self.dialect), True)
        self._ready = True

    async def _amigrate(self) -> None:
        await self._atransact(flows.migrate(self.dialect), True)
        self._ready = True

    # --- sync API -----------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``checkpoint_id``, else the thread/namespace's latest."""
        return self._run(flows.get_tuple(self.dialect, self._codec, *thread_target(config)))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first; read in one transaction, then yielded."""
        q = ListQuery.of(config, filter, before, limit)
        yield from self._run(flows.list_checkpoints(self.dialect, self._codec, q))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` and its new blobs in one transaction; returns its config."""
        flow = flows.put(self.dialect, self._codec, config, checkpoint, metadata, new_versions)
        plan = self._run(flow, True)
        plan.commit()
        return plan.config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes in one transaction (first regular write per idx wins)."""
        if writes:
            flow = flows.put_writes(self.dialect, self._codec, config, writes, task_id, task_path)
            self._codec.written(self._run(flow, True))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of ``thread_id``."""
        key = self._run(flows.delete_thread(self.dialect, self._codec, str(thread_id)), True)
        if key is not None:
            self._codec.forget_thread(key)

    def perform_batch(self, ops: Sequence[tuple[Any, ...]]) -> None:
        """Engine save ops (``("put", config, checkpoint, metadata, new_versions)`` and
        ``("put_writes", config, writes, task_id, task_path)``) in one transaction: all of
        them are stored or none. On failure the caller stores them one by one (the engine's
        ``perform_sync``), so the ops before a failing one are kept."""
        try:
            self._run(flows.batch(self.dialect, self._codec, ops), True)
        except BaseException:
            self._codec.forget_ops(ops)
            raise

    async def aperform_batch(self, ops: Sequence[tuple[Any, ...]]) -> None:
        """Async ``perform_batch``."""
        try:
            await self._arun(flows.batch(self.dialect, self._codec, ops), True)
        except BaseException:
            self._codec.forget_ops(ops)
            raise

    get_next_version = string_versions
    """Versions as sortable strings: a counter plus a random suffix."""

    # --- async API ----------------------------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async ``get_tuple``."""
        flow = flows.get_tuple(self.dialect, self._codec, *thread_target(config))
        return await self._arun(flow)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async ``list``."""
        q = ListQuery.of(config, filter, before, limit)
        for item in await self._arun(flows.list_checkpoints(self.dialect, self._codec, q)):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async ``put``."""
        flow = flows.put(self.dialect, self._codec, config, checkpoint, metadata, new_versions)
        plan = await self._arun(flow, True)
        plan.commit()
        return plan.config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async ``put_writes``."""
        if writes:
            flow = flows.put_writes(self.dialect, self._codec, config, writes, task_id, task_path)
            self._codec.written(await self._arun(flow, True))

    async def adelete_thread(self, thread_id: str) -> None:
        """Async ``delete_thread``."""
        key = await self._arun(flows.delete_thread(self.dialect, self._codec, str(thread_id)), True)
        if key is not None:
            self._codec.forget_thread(key)
