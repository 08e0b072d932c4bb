"""``InMemorySaver``: a dict-backed saver for tests, notebooks and single-process runs.

Values are stored **serialized** with ``serde`` (like LangGraph), never as live objects: a
node that later mutates a list or dict it returned cannot change history, and every read
returns fresh objects. It stays cheap because only channels in ``new_versions`` are
encoded, and a list that grew by appending is stored as just the appended suffix (see
``stepgraph.checkpoint._codec``), so a put encodes what changed, not the whole state.

Layout (LangGraph-compatible keys)::

    storage[thread_id][checkpoint_ns][checkpoint_id] = (typed checkpoint, typed metadata, parent_id)
    blobs[(thread_id, checkpoint_ns, channel, version)] = (type, bytes, base_version | None)
    writes[(thread_id, checkpoint_ns, checkpoint_id)][(task_id, idx)] = (task_id, channel, typed value, task_path)
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from stepgraph.checkpoint._codec import (
    EMPTY,
    Blob,
    BlobKey,
    CheckpointRow,
    ListQuery,
    SaverCodec,
    WriteRow,
)
from stepgraph.checkpoint._persistent import PersistentDict
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

__all__ = ["InMemorySaver", "MemorySaver", "PersistentDict"]

_Typed = tuple[str, bytes]
_Entry = tuple[_Typed, _Typed, str | None]


class InMemorySaver(BaseCheckpointSaver[str]):
    """Keeps checkpoints in process memory; async methods call the sync ones directly.

    Thread-safe: one lock guards the dicts; encoding and decoding happen outside it.
    """

    inline_writes = True
    """Stores in memory: the engine writes inline instead of on a writer thread."""
    async_calls_sync = True
    """Its async methods only call the sync ones, inline: an ``ainvoke`` whose nodes are
    all sync may run on one worker thread with the sync driver
    (``engine/driver_thread.py``)."""

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        factory: Callable[..., defaultdict[Any, Any]] = defaultdict,
    ) -> None:
        """``factory`` builds the three tables (``defaultdict`` by default); with another
        one, such as ``functools.partial(PersistentDict, filename=...)``, the tables are
        context managers entered on ``stack`` and closed when the saver is."""
        super().__init__(serde=serde)
        self.storage: defaultdict[str, dict[str, dict[str, _Entry]]] = factory(dict)
        self.writes: defaultdict[tuple[str, str, str], dict[tuple[str, int], Any]] = factory(dict)
        self.blobs: dict[BlobKey, Blob] = factory()
        self.stack = ExitStack()
        """Closed with the saver (``__exit__``); the tables made by a ``factory`` are on it."""
        if factory is not defaultdict:
            for table in (self.storage, self.writes, self.blobs):
                if hasattr(table, "__enter__"):
                    self.stack.enter_context(table)  # type: ignore[arg-type]
        self._codec = SaverCodec(self.serde)
        self._lock = threading.Lock()

    def __enter__(self) -> Self:
        self.stack.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self.stack.__exit__(et, e, tb)

    async def __aenter__(self) -> Self:
        self.stack.__enter__()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self.stack.__exit__(et, e, tb)

    # --- sync API -----------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``checkpoint_id``, else the thread/namespace's latest."""
        thread_id, ns, checkpoint_id = thread_target(config)
        with self._lock:
            saved = self.storage.get(thread_id, {}).get(ns)
            if not saved:
                return None
            if checkpoint_id is None:
                checkpoint_id = max(saved)
            entry = saved.get(checkpoint_id)
            if entry is None:
                return None
            writes = self._writes_of(thread_id, ns, checkpoint_id)
        return self._load(_row(thread_id, ns, checkpoint_id, entry), None, writes)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first (see ``BaseCheckpointSaver.list``)."""
        q = ListQuery.of(config, filter, before, limit)
        with self._lock:
            threads = [q.thread_id] if q.thread_id is not None else list(self.storage)
            rows = [
                _row(t, ns, cid, entry)
                for t in threads
                for ns, saved in self.storage.get(t, {}).items()
                if q.ns is None or ns == q.ns
                for cid, entry in saved.items()
                if (q.checkpoint_id is None or cid == q.checkpoint_id)
                and (q.before_id is None or cid < q.before_id)
            ]
        rows.sort(key=lambda r: r[2], reverse=True)
        count = 0
        for row in rows:
            if q.limit is not None and count >= q.limit:
                return
            metadata = self._codec.load_metadata(row)
            if not q.matches(metadata):
                continue
            with self._lock:
                writes = self._writes_of(row[0], row[1], row[2])
            count += 1
            yield self._load(row, metadata, writes)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint``; blobs only for ``new_versions``, lists as deltas when they grew."""
        plan = self._codec.plan_put(config, checkpoint, metadata, new_versions)
        thread_id, ns, checkpoint_id, parent_id, ctype, cdata, mtype, mdata = plan.checkpoint_row
        entry = ((ctype, cdata), (mtype, mdata), parent_id)
        blobs = self.blobs
        with self._lock:
            for t, n, channel, version, typ, data, base, _ in plan.blob_rows:
                key = (t, n, channel, version)
                old = blobs.get(key)  # type: ignore[call-overload]
                # A version's value is stored once; an empty marker may be filled in later
                # (a DeltaChannel key stored whole at a version first stored without value).
                if old is None or (old[0] == EMPTY and typ != EMPTY):
                    blobs[key] = (typ, data, base)
            saved = self.storage[thread_id]
            in_ns = saved.get(ns)
            if in_ns is None:
                in_ns = saved[ns] = {}
            in_ns[checkpoint_id] = entry
        if plan.tips:  # (no value stored: no delta base to remember or forget)
            plan.commit()
        return plan.config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes: first regular write per idx wins, special ones overwrite."""
        regular, special = self._codec.plan_writes(config, writes, task_id, task_path)
        if not regular and not special:
            return
        first = (regular or special)[0]
        with self._lock:  # (every row names the same checkpoint)
            bucket = self.writes[(first[0], first[1], first[2])]
            for _, _, _, tid, idx, channel, typ, data, path in regular:
                if (tid, idx) not in bucket:
                    bucket[(tid, idx)] = (tid, channel, (typ, data), path)
            for _, _, _, tid, idx, channel, typ, data, path in special:
                bucket[(tid, idx)] = (tid, channel, (typ, data), path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of ``thread_id``."""
        thread_id = str(thread_id)
        with self._lock:
            self.storage.pop(thread_id, None)
            for key in [k for k in self.writes if k[0] == thread_id]:
                del self.writes[key]
            for key in [k for k in self.blobs if k[0] == thread_id]:
                del self.blobs[key]
        self._codec.forget_thread(thread_id)

    get_next_version = string_versions
    """Versions as sortable strings: a counter plus a random suffix."""

    # --- async API: the dict operations never block, so the sync methods run inline ---
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async ``get_tuple`` (runs inline)."""
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async ``list`` (runs inline)."""
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async ``put`` (runs inline)."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async ``put_writes`` (runs inline)."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async ``delete_thread`` (runs inline)."""
        self.delete_thread(thread_id)

    # --- helpers ------------------------------------------------------------------------
    def _writes_of(self, thread_id: str, ns: str, checkpoint_id: str) -> list[WriteRow]:
        bucket = self.writes.get((thread_id, ns, checkpoint_id))
        if not bucket:
            return []
        return [
            (thread_id, ns, checkpoint_id, tid, idx, channel, typed[0], typed[1], path)
            for (tid, idx), (_, channel, typed, path) in bucket.items()
        ]

    def _load(
        self, row: CheckpointRow, metadata: dict[str, Any] | None, writes: list[WriteRow]
    ) -> CheckpointTuple:
        codec = self._codec
        if metadata is None:
            metadata = codec.load_metadata(row)
        return codec.load_tuple(row, codec.load_checkpoint(row), metadata, self.blobs.get, writes)


def _row(thread_id: str, ns: str, checkpoint_id: str, entry: _Entry) -> CheckpointRow:
    (ctype, cdata), (mtype, mdata), parent_id = entry
    return (thread_id, ns, checkpoint_id, parent_id, ctype, cdata, mtype, mdata)


MemorySaver = InMemorySaver
"""LangGraph's older name for ``InMemorySaver``."""
