"""The SQL savers' row format: diff rows, inline small values, content-addressed pieces.

``CompactCodec`` extends ``SaverCodec`` (list deltas) with what keeps a long conversation's
storage close to the size of its messages:

- **Diff rows.** A checkpoint row holds the packed checkpoint (``_packing``), or, when its
  parent is the last row this process stored for the thread, only the difference from the
  parent (``kind = DIFF``). Every ``CHAIN_MAX``-th row of a chain is full, so a read patches at
  most that many rows; it follows ``parent_checkpoint_id`` (one recursive query) unless the
  parent's packed form is still in memory.
- **Inline values.** A channel value that encodes to at most ``INLINE_MAX`` bytes and is not a
  list lives in the row (under ``iv``) instead of in a blob row of its own; channels without
  a value get no row at all.
- **Pieces.** Large list elements of stored values and writes (messages, say) are stored once
  per thread and referenced by digest (``_pieces``), so a message in the input, in its task's
  pending write, in a list delta and in list snapshots takes its bytes only once; pieces are
  stored deflated with a fixed dictionary of message fields (``_squeeze``).
- **Shorter keys.** Ids, versions, types and task paths are stored in shorter forms that
  sort the same (``_ids``, ``_stored_forms``); a long thread id is stored as a key of
  ``sg_threads`` (``thread_key``); a task's regular writes share one row (``WritesPlan``).

Whether a value is inline is a function of the value alone, so a full row written with no
parent in memory re-derives the inline values from ``channel_values`` and agrees with the rows
written before it. All memory here (row tips, packed rows, pieces) is a cache or a hint: a
miss costs a full row or a query, never a wrong read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stepgraph.checkpoint import _packing, _pieces
from stepgraph.checkpoint._chains import ChainReads, Recalled
from stepgraph.checkpoint._codec import (
    PIECED,
    BlobRow,
    PutPlan,
    SaverCodec,
    WriteRow,
    reading,
    write_target,
)
from stepgraph.checkpoint._concat import MSGPACK
from stepgraph.checkpoint._ids import loaded_id, loaded_version, stored_id, stored_version
from stepgraph.checkpoint._lru import ENTRY_OVERHEAD, Lru
from stepgraph.checkpoint._squeeze import PieceTooLarge, pack_piece, unpack_piece
from stepgraph.checkpoint._stored_forms import loaded_type, long_path, short_path, stored_type
from stepgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    RunnableConfig,
    SaverError,
    checkpoint_config,
    get_checkpoint_metadata,
    thread_target,
)
from stepgraph.checkpoint.serde._backend import get_backend
from stepgraph.checkpoint.serde._limits import limit_error, limits_of
from stepgraph.constants import MISSING, WRITES_IDX_MAP

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["DIFF", "FULL", "CompactCodec", "CompactPlan", "CompactRow", "PieceRow", "WritesPlan"]

FULL, DIFF = 0, 1
"""``kind`` of a checkpoint row: a whole packed checkpoint, or a diff from its parent."""
CHAIN_MAX = 16
"""Rows per diff chain (the first is full)."""
INLINE_MAX = 48
"""Values (not lists) encoding to at most this many bytes are stored in the checkpoint row."""

CompactRow = tuple[str, str, str, str | None, str, bytes, str, bytes, int]
"""``CheckpointRow + (kind,)``."""
PieceRow = tuple[str, bytes, bytes]
"""``(thread_id, digest, bytes)``."""
Decoded = tuple[Checkpoint, dict[str, Any], dict[str, Any]]
"""A read row: ``(checkpoint without values, inline values, metadata)``."""
RowKey = tuple[str, str, str]
"""``(thread_id, checkpoint_ns, checkpoint_id)``."""


@dataclass(slots=True)
class _RowTip:
    """The last checkpoint row stored for one (thread, ns)."""

    checkpoint_id: str
    packed: dict[str, Any]
    versions: dict[str, Any]
    inline: dict[str, Any]
    depth: int
    nbytes: int
    """The encoded bytes of the row (a diff row: its parent's plus its own)."""


Packed = tuple[dict[str, Any], int, int]
"""A packed row in memory: ``(packed dict, depth in its diff chain, nbytes)``."""

MERGED = "w:"
"""Stored type prefix of a write row holding all regular writes of one ``put_writes``."""


@dataclass(slots=True)
class WritesPlan:
    """The rows of one ``put_writes``: a task's regular writes are stored as ``merged`` (one
    row) when the task has none stored yet, else as single rows that keep existing ones."""

    regular: list[WriteRow]
    special: list[WriteRow]
    pieces: list[PieceRow]
    merged: WriteRow | None
    raw_pieces: dict[bytes, bytes]
    thread_key: tuple[str, str] | None = None


@dataclass(slots=True)
class CompactPlan(PutPlan):
    """A ``PutPlan`` whose row is a ``CompactRow``, with the pieces it references."""

    piece_rows: list[PieceRow] = field(default_factory=list)
    raw_pieces: dict[bytes, bytes] = field(default_factory=dict)
    row_tip: tuple[tuple[str, str], _RowTip] | None = None
    thread_key: tuple[str, str] | None = None
    """``(thread id, key)`` when the rows store the thread under a key."""

    def commit(self) -> None:
        """Remember the stored lists and row as bases; call once the rows are durable."""
        codec = self.codec
        assert isinstance(codec, CompactCodec)
        codec._remember(self.tips)
        if self.row_tip is not None:
            codec._remember_row(*self.row_tip)
        codec._cache_pieces(self.raw_pieces.items())
        if self.thread_key is not None:
            codec.remember_thread_key(*self.thread_key)


def _refuse(obj: Any) -> Any:
    raise TypeError(f"not plain data: {type(obj).__name__}")


def _plain_packer() -> Callable[[Any], bytes] | None:
    """A msgpack packer for plain data (int dict keys allowed), or ``None``."""
    try:
        backend = get_backend()
    except Exception:
        return None
    return lambda obj: backend.pack(obj, _refuse, True)


SNAPSHOT_RATIO = 2.0
"""``SaverCodec.snapshot_ratio`` of the SQL savers (see ``CompactCodec.__init__``)."""


class CompactCodec(SaverCodec):
    """``SaverCodec`` plus diff rows, inline values and pieces (see the module docstring)."""

    def __init__(self, serde: SerializerProtocol, **options: Any) -> None:
        # A snapshot of a split list is its piece references (15 bytes an element), so
        # snapshots are cheap here and a shorter delta chain makes every read cheaper: a
        # snapshot once the deltas outweigh twice the last one (6x for the plain codec).
        options.setdefault("snapshot_ratio", SNAPSHOT_RATIO)
        super().__init__(serde, **options)
        b = self.budgets
        self._rows = Lru(b["rows"], self.max_tips)  # (thread, ns) -> _RowTip
        self._packed = Lru(b["packed"], self.max_tips)  # RowKey -> Packed
        self._pieces = Lru(b["pieces"])  # digest -> bytes
        self._stored_pieces = Lru(b["stored_pieces"])  # digest -> stored (compressed) form
        self.thread_keys = Lru(b["thread_keys"])  # thread id -> stored key (keys never change)
        self._row_packer = _plain_packer() if self._plain_arrays else None
        if self._decoded is not None:
            self._reads = ChainReads(b["reads"], self.max_tips)

    # --- writing ------------------------------------------------------------------------
    def plan_put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: Mapping[str, Any],
        new_versions: ChannelVersions,
        thread_key: str | None = None,
    ) -> CompactPlan:
        """Rows for ``put``: the (diff) checkpoint row, blob rows and the pieces they use.

        ``thread_key`` is what rows store instead of a long thread id (``_flows.thread_key``).
        """
        thread_name, ns, parent_id = thread_target(config)
        thread_id = thread_key or thread_name
        stored = dict(checkpoint)
        values = stored.pop("channel_values", None) or {}
        versions = stored.get("channel_versions") or {}
        tip = self._rows.get((thread_id, ns))
        warm = tip is not None and parent_id is not None and tip.checkpoint_id == parent_id
        pieces: dict[bytes, bytes] = {}
        inline, blob_rows, lists = self._inline_values(
            (thread_id, ns), values, versions, new_versions, tip if warm else None, pieces
        )
        if lists:
            list_rows, tips = self._encode_blobs(
                thread_id, ns, values, lists,
                dumps_list=lambda items: self._pieced_list(items, pieces),
            )  # fmt: skip
            blob_rows.extend(self._split_blob(row, pieces) for row in list_rows)
        else:  # (no list changed: nothing to encode or remember)
            tips = []
        md = get_checkpoint_metadata(config, metadata)
        if warm:
            assert tip is not None
            packed = _packing.pack(stored, inline, md, tip.packed["n"])
            if tip.depth + 1 < CHAIN_MAX:
                kind, depth, payload = DIFF, tip.depth + 1, _packing.row_diff(tip.packed, packed)
            else:
                kind, depth, payload = FULL, 0, packed
        else:
            packed = _packing.pack(stored, inline, md, None)
            kind, depth, payload = FULL, 0, packed
        ctype, cdata = self._dumps_row(payload)
        nbytes = len(cdata) + (tip.nbytes if kind == DIFF and tip is not None else 0)
        mtype, mdata = "", b""  # the metadata is part of the packed row
        checkpoint_id = checkpoint["id"]
        row: CompactRow = (thread_id, ns, stored_id(checkpoint_id),
                           None if parent_id is None else stored_id(parent_id),
                           stored_type(ctype), cdata, mtype, mdata, kind)  # fmt: skip
        return CompactPlan(
            checkpoint_config(thread_name, ns, checkpoint_id),
            row,  # type: ignore[arg-type]
            blob_rows,
            tips,
            self,
            piece_rows=self._piece_rows(thread_id, pieces) if pieces else [],
            raw_pieces=pieces,
            thread_key=None if thread_id == thread_name else (thread_name, thread_id),
            row_tip=(
                (thread_id, ns),
                _RowTip(checkpoint_id, packed, dict(versions), inline, depth, nbytes),
            ),
        )

    def _dumps_row(self, payload: dict[str, Any]) -> tuple[str, bytes]:
        """Encode a packed row: straight to msgpack when the serializer writes plain msgpack
        (its integer keys would send the serializer down its slow path), else with it."""
        if self._row_packer is not None:
            try:
                return MSGPACK, self._row_packer(payload)
            except (TypeError, ValueError, OverflowError):
                pass  # something only the serializer knows how to write
        return self.serde.dumps_typed(payload)

    def _inline_values(
        self,
        key: tuple[str, str],
        values: Mapping[str, Any],
        versions: Mapping[str, Any],
        new_versions: ChannelVersions,
        parent: _RowTip | None,
        pieces: dict[bytes, bytes],
    ) -> tuple[dict[str, Any], list[BlobRow], dict[str, Any]]:
        """``(inline values of the row, blob rows of other values, new list versions)``."""
        inline: dict[str, Any] = {}
        rows: list[BlobRow] = []
        lists: dict[str, Any] = {}
        base_versions = parent.versions if parent is not None else {}
        base_inline = parent.inline if parent is not None else {}
        for channel, version in versions.items():
            new = channel in new_versions
            if not new and base_versions.get(channel, MISSING) == version:
                same = base_inline.get(channel, MISSING)
                if same is not MISSING:
                    inline[channel] = same
                continue  # unchanged since the parent: stored where the parent has it
            value = values.get(channel, MISSING)
            if value is MISSING:
                continue  # no value: nothing to store
            if type(value) is list:
                if new:
                    lists[channel] = new_versions[channel]
                continue
            if not new and isinstance(value, str | bytes) and len(value) > INLINE_MAX:
                continue  # cannot be inline, so its blob row exists
            typ, data = self.serde.dumps_typed(value)
            if len(data) >= _pieces.MIN_PIECE:
                typ, data = self._split(typ, data, pieces)
            if len(data) <= INLINE_MAX:
                inline[channel] = (
                    data if typ == MSGPACK else [data] if typ == PIECED else [typ, data]
                )
            elif new:
                v = stored_version(str(new_versions[channel]))
                rows.append((*key, channel, v, stored_type(typ), data, None, v))
        for channel, version in new_versions.items():
            if channel not in versions and type(values.get(channel)) is list:
                lists[channel] = version
        return inline, rows, lists

    def _split_blob(self, row: BlobRow, pieces: dict[bytes, bytes]) -> BlobRow:
        """A list blob row (its pieces already split off by ``_pieced``) with type and
        versions in their stored form."""
        typ, data = stored_type(row[4]), row[5]
        base = row[6]
        return (*row[:3], stored_version(row[3]), typ, data,
                None if base is None else stored_version(base), stored_version(row[7]))  # fmt: skip

    def blob_version(self, version: Any) -> str:
        """Blob rows store versions in their short form (``_ids.stored_version``)."""
        return stored_version(str(version))

    def loaded_blob_version(self, stored: str) -> str:
        """``blob_version`` reversed."""
        return loaded_version(stored)

    def _pieced_list(self, items: list[Any], pieces: dict[bytes, bytes]) -> tuple[str, bytes, int]:
        """``_pieced`` of a list, with the bytes of its whole encoding (``SaverCodec.ListDumps``)."""
        pack = self._element_packer
        if pack is not None:
            try:
                split = _pieces.split_items(items, pack)
            except Exception:  # noqa: BLE001 - the serializer's own error, raised below
                split = None
            if split is not None:
                skeleton, found, total = split
                if not found:
                    return MSGPACK, skeleton, total
                pieces.update(found)
                return PIECED, skeleton, total
        typ, data = self.serde.dumps_typed(items)
        return (*self._split(typ, data, pieces), len(data))

    def _pieced(self, value: Any, pieces: dict[bytes, bytes]) -> tuple[str, bytes]:
        """``value`` encoded with its large list elements split off into ``pieces``.

        A list is encoded element by element (``_pieces.split_items``): each distinct element
        object is packed once and never walked byte by byte; other values are packed whole
        and walked (``_split``)."""
        if type(value) is list:
            return self._pieced_list(value, pieces)[:2]
        typ, data = self.serde.dumps_typed(value)
        if len(data) < _pieces.MIN_PIECE:
            return typ, data  # (too short to hold a piece: most writes)
        return self._split(typ, data, pieces)

    def _split(self, typ: str, data: bytes, pieces: dict[bytes, bytes]) -> tuple[str, bytes]:
        if typ != MSGPACK or not self._plain_arrays or len(data) < _pieces.MIN_PIECE:
            return typ, data
        split = _pieces.split(data)
        if split is None:
            return typ, data
        pieces.update(split[1])
        return PIECED, split[0]

    def plan_write_rows(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
        thread_key: str | None = None,
    ) -> WritesPlan:
        """``plan_writes`` with ids and paths shortened, large elements split off, and the
        regular writes also offered as one merged row (see ``WritesPlan``)."""
        thread_name, ns, checkpoint_id = write_target(config)
        thread_id = thread_key or thread_name
        checkpoint, task, path = stored_id(checkpoint_id), stored_id(task_id), short_path(task_path)
        pieces: dict[bytes, bytes] = {}
        regular: list[WriteRow] = []
        special: list[WriteRow] = []
        for idx, (channel, value) in enumerate(writes):
            fixed = WRITES_IDX_MAP.get(channel)
            typ, data = self._pieced(value, pieces)
            row = (thread_id, ns, checkpoint, task, idx if fixed is None else fixed, channel,
                   stored_type(typ), data, path)  # fmt: skip
            (regular if fixed is None else special).append(row)
        merged: WriteRow | None = None
        if len(regular) > 1:
            typ, data = self._dumps_row([[w[5], w[6], w[7]] for w in regular])
            merged = (*regular[0][:5], "", MERGED + stored_type(typ), data, path)  # type: ignore[assignment]
        piece_rows = self._piece_rows(thread_id, pieces) if pieces else []
        key = None if thread_id == thread_name else (thread_name, thread_id)
        return WritesPlan(regular, special, piece_rows, merged, pieces, key)

    @reading
    def expand_writes(self, rows: Sequence[WriteRow]) -> list[WriteRow]:
        """Stored write rows with merged rows expanded and types restored; a merged row wins
        over single rows for the same (task, idx): it is only stored when the task had none."""
        out: list[WriteRow] = []
        merged_keys: set[tuple[str, str, str, str, int]] = set()
        for w in rows:
            if w[6].startswith(MERGED):
                container = (loaded_type(w[6][len(MERGED) :]), w[7])
                for i, (channel, typ, data) in enumerate(self.serde.loads_typed(container)):
                    out.append((*w[:4], w[4] + i, channel, loaded_type(typ), data, w[8]))
                    merged_keys.add((w[0], w[1], w[2], w[3], w[4] + i))
        out.extend((*w[:6], loaded_type(w[6]), *w[7:]) for w in rows
                   if not w[6].startswith(MERGED)
                   and (w[0], w[1], w[2], w[3], w[4]) not in merged_keys)  # fmt: skip
        return out

    def written(self, plan: WritesPlan) -> None:
        """Writes were stored: their pieces (and thread key) may be served from memory."""
        self._cache_pieces(plan.raw_pieces.items())
        if plan.thread_key is not None:
            self.remember_thread_key(*plan.thread_key)

    def _piece_rows(self, thread_id: str, pieces: Mapping[bytes, bytes]) -> list[PieceRow]:
        """Rows of the pieces table (compressed once per piece, see ``_squeeze``)."""
        rows: list[PieceRow] = []
        for digest, raw in pieces.items():
            stored = self._stored_pieces.get(digest)
            if stored is None:
                stored = pack_piece(raw)
                self._stored_pieces.put(digest, stored, len(stored) + ENTRY_OVERHEAD)
            rows.append((thread_id, digest, stored))
        return rows

    def _remember_row(self, key: tuple[str, str], tip: _RowTip) -> None:
        cost = tip.nbytes + ENTRY_OVERHEAD
        self._rows.put(key, tip, cost)
        self._packed.put(
            (*key, stored_id(tip.checkpoint_id)), (tip.packed, tip.depth, tip.nbytes), cost
        )

    def _cache_pieces(self, pieces: Any) -> None:
        for digest, data in pieces:
            self._pieces.put(digest, data, len(data) + ENTRY_OVERHEAD)

    def _counted(self) -> list[Lru]:
        return [*super()._counted(), self._rows, self._packed]

    def remember_thread_key(self, thread_id: str, key: str) -> None:
        """A long thread id is stored under ``key``."""
        self.thread_keys.put(thread_id, key, len(thread_id) + len(key) + ENTRY_OVERHEAD)

    def cache_usage(self) -> dict[str, tuple[int, int, int]]:
        usage = super().cache_usage()
        for name, lru in (
            ("rows", self._rows),
            ("packed", self._packed),
            ("pieces", self._pieces),
            ("stored_pieces", self._stored_pieces),
            ("thread_keys", self.thread_keys),
        ):
            usage[name] = (len(lru), lru.spent, lru.budget)
        return usage

    def forget_ops(self, ops: Sequence[tuple[Any, ...]]) -> None:
        """A batch of save ops failed: forget what its plans taught (threads, keys, tips)."""
        for op in ops:
            name = str(op[1]["configurable"]["thread_id"])
            key = self.thread_keys.get(name)
            self.thread_keys.drop(lambda k, name=name: k == name)
            self.forget_thread(name)
            if key is not None:
                self.forget_thread(key)

    def forget_thread(self, thread_id: str) -> None:
        """Drop what is remembered of a deleted thread."""
        super().forget_thread(thread_id)
        self._rows.drop(lambda k: k[0] == thread_id)
        self._packed.drop(lambda k: k[0] == thread_id)

    # --- reading ------------------------------------------------------------------------
    def needs_chain(self, rows: Sequence[CompactRow]) -> tuple[list[RowKey], dict[RowKey, Packed]]:
        """``(parents to fetch with their chains, parents found in memory)`` before ``rows``
        can be decoded; pass the second to ``load_checkpoints`` (the cache may drop them)."""
        have = {(r[0], r[1], r[2]) for r in rows}
        want: list[RowKey] = []
        pinned: dict[RowKey, Packed] = {}
        for r in rows:
            if r[8] != DIFF:
                continue
            parent = (r[0], r[1], r[3] or "")
            if parent in have:
                continue
            found = self._packed.get(parent)
            if found is None:
                want.append(parent)
            else:
                pinned[parent] = found
            have.add(parent)
        return want, pinned

    @reading
    def load_checkpoints(
        self,
        rows: Sequence[CompactRow],
        ancestors: Sequence[CompactRow],
        pinned: Mapping[RowKey, Packed] | None = None,
    ) -> list[Decoded]:
        """``(checkpoint, inline values, metadata)`` per row, patching diffs along parents."""
        by_key = {(r[0], r[1], r[2]): r for r in (*ancestors, *rows)}
        memo: dict[RowKey, Packed] = dict(pinned or {})

        def packed_of(key: RowKey) -> Packed:
            """The packed row, its depth in its diff chain and its bytes."""
            chain: list[CompactRow] = []
            found: Packed | None = None
            while True:
                found = memo.get(key) or self._packed.get(key)
                if found is not None:
                    break
                row = by_key.get(key)
                if row is None:
                    raise self._broken_chain(key)
                if len(chain) >= CHAIN_MAX:  # written chains are shorter: a loop, or planted
                    raise self._broken_chain(key, looped=True)
                chain.append(row)
                if row[8] != DIFF:
                    break
                key = (row[0], row[1], row[3] or "")
            base, depth, nbytes = found if found is not None else ({}, -1, 0)
            for row in reversed(chain):
                payload = self.serde.loads_typed((loaded_type(row[4]), row[5]))
                if row[8] == DIFF:
                    base, depth, nbytes = (
                        _packing.row_patch(base, payload),
                        depth + 1,
                        nbytes + len(row[5]),
                    )
                else:
                    base, depth, nbytes = payload, 0, len(row[5])
                memo[(row[0], row[1], row[2])] = (base, depth, nbytes)
                self._packed.put(
                    (row[0], row[1], row[2]), (base, depth, nbytes), nbytes + ENTRY_OVERHEAD
                )
            return base, depth, nbytes

        out: list[Decoded] = []
        for r in rows:
            if r[8] != DIFF:
                payload = self.serde.loads_typed((loaded_type(r[4]), r[5]))
                if "channel_versions" in payload:  # a row of the first format: not packed
                    payload["channel_values"] = {}
                    out.append((payload, {}, self.load_metadata(r)))  # type: ignore[arg-type]
                    continue
            packed, depth, nbytes = packed_of((r[0], r[1], r[2]))
            checkpoint, inline, md = _packing.unpack(packed, loaded_id(r[2]))
            self._learn_row((r[0], r[1]), checkpoint, packed, inline, depth, nbytes)
            checkpoint["channel_values"] = {}
            out.append((checkpoint, inline, md))  # type: ignore[arg-type]
        return out

    def _learn_row(
        self,
        key: tuple[str, str],
        checkpoint: Checkpoint,
        packed: dict[str, Any],
        inline: dict[str, Any],
        depth: int,
        nbytes: int,
    ) -> None:
        """A row read from storage is the diff base of its thread's next put, unless this
        process already has one (a resumed run then starts with a diff row, not a full one)."""
        if key not in self._rows:
            versions = dict(checkpoint["channel_versions"])
            self._remember_row(
                key, _RowTip(checkpoint["id"], packed, versions, inline, depth, nbytes)
            )

    def _broken_chain(self, key: RowKey, *, looped: bool = False) -> Exception:
        if looped:
            return SaverError(
                f"Checkpoint {key[2]!r} of thread {key[0]!r} is stored as a chain of more than "
                f"{CHAIN_MAX} diffs (stepgraph writes at most {CHAIN_MAX}): the rows loop or "
                "were changed outside stepgraph.",
                code="SG414",
                hint="restore the thread's rows from a backup or delete the thread",
            )
        return SaverError(
            f"Checkpoint {key[2]!r} of thread {key[0]!r} is needed to read a later "
            "checkpoint stored as a diff, but it is missing.",
            code="SG416",
            hint="the thread was changed by another process mid-run; re-run it",
        )

    @reading
    def piece_refs(
        self,
        inline: Sequence[Mapping[str, Any]],
        blobs: Mapping[Any, tuple[str, bytes, str | None]],
        writes: Sequence[WriteRow],
        recalled: Recalled | None = None,
    ) -> tuple[dict[bytes, bytes], list[bytes]]:
        """``(pieces known in memory, digests to fetch)`` for the split values read (not for
        the rows of chains ``recalled``: a read takes their elements from memory)."""
        digests: set[bytes] = set()
        for values in inline:
            for stored in values.values():
                if type(stored) is list and len(stored) == 1:
                    digests.update(_pieces.refs(stored[0]))
        keys = blobs.keys()
        if recalled:  # (set operations in C, not a test per row of the long chains)
            skip: set[Any] = set()
            for entry, usable in recalled.values():
                skip.update(entry.keys[usable:])
            keys = keys - skip
        for key in keys:
            typ, data, _ = blobs[key]
            if typ == PIECED:
                digests.update(_pieces.refs(data))
        for w in writes:
            if w[6] == PIECED:
                digests.update(_pieces.refs(w[7]))
        return self._pieces.get_many(digests)

    @reading
    def load_tuple(  # type: ignore[override]
        self, row: Any, checkpoint: Any, metadata: Any, lookup: Any, writes: Any, **kw: Any
    ) -> Any:
        """``SaverCodec.load_tuple`` with ids and task paths restored."""
        row = (*row[:2], loaded_id(row[2]), row[3] and loaded_id(row[3]), *row[4:])
        writes = [(*w[:2], loaded_id(w[2]), loaded_id(w[3]), *w[4:8], long_path(w[8]))
                  for w in writes]  # fmt: skip
        return super().load_tuple(row, checkpoint, metadata, lookup, writes, **kw)

    @reading
    def fetched_pieces(self, rows: Sequence[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
        """Pieces read from the database (``(digest, stored)`` rows), kept for later reads.

        All together they may inflate to at most ``max_expansion`` times their stored bytes
        (plus ``expansion_allowance``): the ratio ``pack_piece`` never exceeds."""
        limits = limits_of(self.serde)
        stored_rows = [(bytes(digest), bytes(stored)) for digest, stored in rows]
        budget = limits.max_expansion * sum(len(s) for _, s in stored_rows)
        budget += limits.expansion_allowance
        found: dict[bytes, bytes] = {}
        for digest, stored in stored_rows:
            try:
                data = unpack_piece(stored, budget)
            except PieceTooLarge:
                raise limit_error(
                    "stored pieces that inflate beyond their budget",
                    "max_expansion",
                    limits.max_expansion,
                ) from None
            budget -= len(data)
            found[digest] = data
        self._cache_pieces(found.items())
        return found
