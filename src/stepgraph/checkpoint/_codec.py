"""Row encoding shared by every saver: checkpoints, channel blobs (with list deltas), writes.

Nothing here does I/O. A saver turns ``put``/``put_writes`` arguments into rows with
``SaverCodec.plan_put``/``plan_writes``, stores them, then calls ``PutPlan.commit()``; reading
goes the other way with ``SaverCodec.load_tuple``.

**List deltas.** A list channel that grows by appending (a messages list) would otherwise
be stored in full at every version: O(turns²) bytes. The codec remembers, per
``(thread, ns, channel)``, the last list it encoded. When a new version starts with that
list (compared by identity first, then equality, in C), only the appended suffix is stored,
as a row whose ``base_version`` names the previous version. A full snapshot is written
again once the deltas since the last snapshot outweigh ``snapshot_ratio`` times that
snapshot, so snapshot sizes grow geometrically and the total stays
``<= (1 + (1 + r) / r)`` times the final size. Reading follows ``base_version`` links down to
a snapshot and concatenates (with one decode when the serializer writes plain msgpack
arrays, see ``_concat``), so every stored version reads back exactly. The memory is only a
hint: a cold or stale entry just means a full snapshot is written, and a failed transaction
never becomes a base (``PutPlan.commit``). A list read from storage is remembered too
(``_learn``), so a new process resuming a thread appends deltas instead of snapshots. Caveats of comparing by identity/equality: an
element mutated *in place* after being stored is seen as unchanged, and an element replaced
by an equal one of another type (``1`` by ``True``) keeps the stored type.

**Reading is hostile-input safe.** Rows may have been written by someone else: a delta chain
that loops is refused (SG414), a value whose pieces would be repeated into more than
``DecodeLimits.max_expansion`` times its stored bytes is refused (SG406), and any other
inconsistency found while decoding a row becomes a ``SerializationError`` (SG403) instead
of an arbitrary exception (``reading``).
"""

from __future__ import annotations

import functools
import itertools
import operator
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from stepgraph.checkpoint._chains import ChainRead, ChainReads, Recalled
from stepgraph.checkpoint._concat import MSGPACK, encodes_plain_arrays, join_arrays
from stepgraph.checkpoint._decoded import DecodedElements
from stepgraph.checkpoint._ids import stored_id
from stepgraph.checkpoint._lru import ENTRY_OVERHEAD, Lru, cache_budgets
from stepgraph.checkpoint._pieces import elements as split_elements
from stepgraph.checkpoint._pieces import encode_runs
from stepgraph.checkpoint._pieces import join as join_pieces
from stepgraph.checkpoint._pieces import refs as piece_refs
from stepgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointTuple,
    RunnableConfig,
    SaverError,
    checkpoint_config,
    get_checkpoint_id,
    get_checkpoint_metadata,
    thread_target,
)
from stepgraph.checkpoint.serde._limits import limit_error, limits_of
from stepgraph.checkpoint.serde.base import SG_CORRUPT, SerializationError
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stepgraph.constants import MISSING, WRITES_IDX_MAP
from stepgraph.errors import StepgraphError

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde.base import SerializerProtocol

F = TypeVar("F", bound=Callable[..., Any])


def reading(fn: F) -> F:
    """Decode stored rows with ``fn``: an unexpected error (a row changed or planted by
    someone else) becomes a coded ``SerializationError`` (SG403), never a bare exception."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StepgraphError:
            raise
        except Exception as exc:
            raise SerializationError(
                f"A stored checkpoint row cannot be decoded ({type(exc).__name__}: "
                f"{str(exc)[:200]}).",
                code=SG_CORRUPT,
                hint="the row was changed outside stepgraph (or is corrupt); restore it from "
                "a backup or delete the thread",
            ) from exc

    return wrapper  # type: ignore[return-value]


__all__ = ["BlobRow", "CheckpointRow", "ListQuery", "PutPlan", "SaverCodec", "WriteRow"]

EMPTY = "empty"
"""Blob type of a channel version that holds no value."""
PIECED = "msgpack/p"
"""Type of msgpack bytes whose large list elements were moved to the pieces table."""
PieceLookup = Callable[[bytes], bytes | None]
"""Reads a piece by its digest."""

BlobKey = tuple[str, str, str, str]
"""``(thread_id, checkpoint_ns, channel, version)``."""
Blob = tuple[str, bytes, str | None]
"""``(type, data, base_version)``; ``base_version`` is set for a delta row."""
BlobRow = tuple[str, str, str, str, str, bytes, str | None, str]
"""``BlobKey + Blob + (anchor,)``: one row of the blobs table. ``anchor`` is the version of
the snapshot a delta chain starts from (a snapshot's own version); versions only grow along a
chain, so a reader fetches a whole chain with one primary-key range scan."""
CheckpointRow = tuple[str, str, str, str | None, str, bytes, str, bytes]
"""``(thread_id, ns, checkpoint_id, parent_id, type, checkpoint, metadata_type, metadata)``."""
WriteRow = tuple[str, str, str, str, int, str, str, bytes, str]
"""``(thread_id, ns, checkpoint_id, task_id, idx, channel, type, data, task_path)``."""


@dataclass(slots=True)
class _Tip:
    """The last list stored for one (thread, ns, channel)."""

    version: str
    """Stored version (deltas are only made from string versions, which sort bytewise)."""
    anchor: str
    """Version of the snapshot this list's delta chain starts from."""
    items: list[Any]
    snapshot_bytes: int
    delta_bytes: int


@dataclass(slots=True)
class PutPlan:
    """Everything one ``put`` stores, in one transaction."""

    config: RunnableConfig
    """Config of the saved checkpoint (returned by ``put``)."""
    checkpoint_row: CheckpointRow
    blob_rows: list[BlobRow]
    tips: list[tuple[tuple[str, str, str], _Tip | None]] = field(repr=False)
    codec: SaverCodec = field(repr=False)

    def commit(self) -> None:
        """Record the stored lists as delta bases; call only once the rows are durable."""
        self.codec._remember(self.tips)


@dataclass(frozen=True, slots=True)
class ListQuery:
    """The arguments of ``list`` in the form every saver filters on."""

    thread_id: str | None
    """Only this thread (``None``: every thread)."""
    ns: str | None
    """Only this namespace (``None``: every namespace of the thread)."""
    checkpoint_id: str | None
    """Only this checkpoint."""
    before_id: str | None
    """Only checkpoints with a smaller id."""
    filter: Mapping[str, Any] | None
    """Metadata keys that must be equal."""
    limit: int | None

    @classmethod
    def of(
        cls,
        config: RunnableConfig | None,
        filter: Mapping[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> ListQuery:
        """Parse ``list(config, filter=, before=, limit=)``."""
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        return cls(
            None if thread_id is None else str(thread_id),
            conf.get("checkpoint_ns"),
            get_checkpoint_id(config),
            get_checkpoint_id(before),
            filter or None,
            limit,
        )

    def stored(self) -> ListQuery:
        """This query with checkpoint ids in their stored form (``_ids.stored_id``)."""
        return replace(
            self,
            checkpoint_id=None if self.checkpoint_id is None else stored_id(self.checkpoint_id),
            before_id=None if self.before_id is None else stored_id(self.before_id),
        )

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """True when every ``filter`` key has an equal value in ``metadata``."""
        return not self.filter or all(metadata.get(k, MISSING) == v for k, v in self.filter.items())


ListDumps = Callable[[list[Any]], tuple[str, bytes, int]]
"""Encodes a list for a blob row: ``(type, data, bytes of its whole encoding)`` (the data of
a saver that splits large elements off is smaller than the encoding it stands for)."""

_KEEP = object()
"""``_encode_list``: leave the channel's delta memory as it is."""


_SIZE = operator.itemgetter(2)
"""The encoded bytes of a ``_resolve`` part."""
_flatten = itertools.chain.from_iterable
_Walk = tuple[list[tuple[str, Any, int]], list[tuple[str, Blob]], "tuple[ChainRead, int] | None"]
"""``SaverCodec._walk``: ``(parts, rows walked, (memo, row) it stopped at)``."""


def _element_packer(serde: Any) -> Callable[[Any], bytes] | None:
    """What ``serde`` writes for a value inside a list, when that is known to be its plain
    msgpack encoding (stepgraph's own serializer, exactly), else ``None``."""
    if type(serde) is not JsonPlusSerializer:
        return None
    codec = getattr(serde, "_codec", None)
    dumps = getattr(codec, "dumps", None)
    return dumps if callable(dumps) else None


def _newer(version: str, than: str) -> bool:
    """True when ``version`` sorts after ``than`` as fixed-width version strings."""
    return len(version) == len(than) and version > than


def write_target(config: RunnableConfig) -> tuple[str, str, str]:
    """``(thread_id, checkpoint_ns, checkpoint_id)`` that ``put_writes`` stores under; SG411
    when the config names no checkpoint."""
    thread_id, ns, checkpoint_id = thread_target(config)
    if checkpoint_id is None:
        raise SaverError(
            "put_writes needs config['configurable']['checkpoint_id']: the checkpoint "
            "the writes belong to.",
            code="SG411",
            hint="pass the config returned by put()",
        )
    return thread_id, ns, checkpoint_id


class SaverCodec:
    """Encodes and decodes saver rows with ``serde``; holds the delta memory (thread-safe)."""

    def __init__(
        self,
        serde: SerializerProtocol,
        *,
        snapshot_ratio: float = 6.0,
        min_delta_budget: int = 256,
        max_tips: int = 4096,
        cache_bytes: int | None = None,
    ) -> None:
        self.serde = serde
        self.snapshot_ratio = snapshot_ratio
        self.min_delta_budget = min_delta_budget
        self._max_tips = max_tips
        self.budgets = cache_budgets(cache_bytes)
        """Bytes each cache may hold (``_lru.cache_budgets``)."""
        self._plain_arrays = encodes_plain_arrays(serde)
        self._tips = Lru(self.budgets["lists"], max_tips)  # (thread, ns, channel) -> _Tip
        self._decoded = DecodedElements(self.budgets["decoded"]) if self._plain_arrays else None
        self._reads: ChainReads | None = None
        """The chains read before (``_chains``): kept by savers that read through ``recall``."""
        self._element_packer = _element_packer(serde) if self._plain_arrays else None
        self._lock = threading.Lock()

    @property
    def max_tips(self) -> int:
        """At most this many entries per memory (besides its byte budget)."""
        return self._max_tips

    @max_tips.setter
    def max_tips(self, value: int) -> None:
        self._max_tips = value
        for lru in self._counted():
            lru.max_items = value

    def _counted(self) -> list[Lru]:
        """The memories bounded by ``max_tips`` too."""
        return [self._tips]

    # --- writing ------------------------------------------------------------------------
    def plan_put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: Mapping[str, Any],
        new_versions: ChannelVersions,
    ) -> PutPlan:
        """Rows for ``put``: the checkpoint (without values) and one blob per new version."""
        thread_id, ns, parent_id = thread_target(config)
        stored = dict(checkpoint)
        values = stored.pop("channel_values", None) or {}
        blob_rows, tips = self._encode_blobs(thread_id, ns, values, new_versions)
        ctype, cdata = self.serde.dumps_typed(stored)
        mtype, mdata = self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))
        checkpoint_id = checkpoint["id"]
        row = (thread_id, ns, checkpoint_id, parent_id, ctype, cdata, mtype, mdata)
        config = {  # (checkpoint_config, made here: once per step)
            "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
        }
        return PutPlan(config, row, blob_rows, tips, self)  # type: ignore[arg-type]

    def plan_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
        dumps: Callable[[Any], tuple[str, bytes]] | None = None,
    ) -> tuple[list[WriteRow], list[WriteRow]]:
        """``(regular, special)`` write rows; special ones (negative idx) overwrite.

        ``dumps`` encodes a value (default ``serde.dumps_typed``)."""
        thread_id, ns, checkpoint_id = write_target(config)
        regular: list[WriteRow] = []
        special: list[WriteRow] = []
        dumps = dumps or self.dumps_value
        for idx, (channel, value) in enumerate(writes):
            fixed = WRITES_IDX_MAP.get(channel)
            typ, data = dumps(value)
            row = (thread_id, ns, checkpoint_id, task_id, idx if fixed is None else fixed,
                   channel, typ, data, task_path)  # fmt: skip
            (regular if fixed is None else special).append(row)
        return regular, special

    def _encode_blobs(
        self,
        thread_id: str,
        ns: str,
        values: Mapping[str, Any],
        new_versions: ChannelVersions,
        dumps_list: ListDumps | None = None,
    ) -> tuple[list[BlobRow], list[tuple[tuple[str, str, str], _Tip | None]]]:
        """Blob rows of ``new_versions``; ``dumps_list`` encodes a list (or the appended part
        of one), default ``serde.dumps_typed``."""
        rows: list[BlobRow] = []
        tips: list[tuple[tuple[str, str, str], _Tip | None]] = []
        dumps = self.serde.dumps_typed
        held = self._tips.items  # (a channel with no list remembered has none to forget)
        for channel, raw_version in new_versions.items():
            version = raw_version if type(raw_version) is str else str(raw_version)
            value = values.get(channel, MISSING)
            if value is MISSING:
                rows.append((thread_id, ns, channel, version, EMPTY, b"", None, version))
                if held and (thread_id, ns, channel) in held:
                    tips.append(((thread_id, ns, channel), None))
            elif type(value) is not list:
                typ, data = dumps(value)
                rows.append((thread_id, ns, channel, version, typ, data, None, version))
                if held and (thread_id, ns, channel) in held:
                    tips.append(((thread_id, ns, channel), None))
            else:
                key = (thread_id, ns, channel)
                typ, data, base, tip, anchor = self._encode_list(key, version, value, dumps_list)
                rows.append((thread_id, ns, channel, version, typ, data, base, anchor))
                if tip is not _KEEP:
                    tips.append((key, tip))
        return rows, tips

    def _encode_list(
        self,
        key: tuple[str, str, str],
        version: str,
        value: list[Any],
        dumps_list: ListDumps | None = None,
    ) -> tuple[str, bytes, str | None, Any, str]:
        """``(type, data, base_version, tip to remember, anchor)`` of a list blob row."""
        dumps = dumps_list or self._dumps_list
        tip = self._tips.get(key)
        if tip is not None and not _newer(version, tip.version):
            # A version stored before (a copied checkpoint puts its versions again): its row
            # is kept as stored (inserts do not overwrite), so it must not become a base.
            typ, data, _ = dumps(value)
            return typ, data, None, _KEEP, version
        if tip is not None:
            n = len(tip.items)
            try:
                extends = len(value) >= n and value[:n] == tip.items
            except Exception:  # an element whose == does not return a bool
                extends = False
            if extends:
                typ, data, size = dumps(value[n:])
                spent = tip.delta_bytes + size
                budget = max(self.snapshot_ratio * tip.snapshot_bytes, self.min_delta_budget)
                if spent <= budget:
                    new = _Tip(version, tip.anchor, value.copy(), tip.snapshot_bytes, spent)
                    return typ, data, tip.version, new, new.anchor
        typ, data, size = dumps(value)
        return typ, data, None, _Tip(version, version, value.copy(), size, 0), version

    def _dumps_list(self, items: list[Any]) -> tuple[str, bytes, int]:
        typ, data = self.dumps_value(items)
        return typ, data, len(data)

    def dumps_value(self, value: Any) -> tuple[str, bytes]:
        """``serde.dumps_typed(value)``; a list that is mostly runs of one object (such as
        ``[item] * n`` appended again and again) is encoded once per run, with the same bytes."""
        pack = self._element_packer
        if pack is not None and type(value) is list and len(value) >= 8:
            try:
                data = encode_runs(value, pack)
            except Exception:  # noqa: BLE001 - the serializer's own error, raised below
                data = None
            if data is not None:
                return MSGPACK, data
        return self.serde.dumps_typed(value)

    def _remember(self, tips: list[tuple[tuple[str, str, str], _Tip | None]]) -> None:
        held = self._tips.items
        for key, tip in tips:
            if tip is None:
                if key in held:  # (most channels are not lists: nothing to forget)
                    self._tips.pop(key)
            else:  # costs the encoded bytes of the list (its snapshot and the deltas since)
                self._tips.put(key, tip, tip.snapshot_bytes + tip.delta_bytes + ENTRY_OVERHEAD)

    def forget_thread(self, thread_id: str) -> None:
        """Drop the delta memory of a deleted thread."""
        self._tips.drop(lambda k: k[0] == thread_id)
        if self._reads is not None:
            self._reads.forget_thread(thread_id)

    def recall(
        self, blobs: Mapping[BlobKey, Blob], channels: Iterable[tuple[str, str, str]] | None = None
    ) -> Recalled:
        """The chains read before that the fetched ``blobs`` (of ``channels``, by default all)
        still hold (``_chains``), for ``load_tuple(recalled=)`` (and so that a saver need not
        fetch their pieces)."""
        return {} if self._reads is None else self._reads.recall(blobs, channels)

    def cache_usage(self) -> dict[str, tuple[int, int, int]]:
        """``{cache: (entries, bytes, budget)}`` of the memories of this codec."""
        usage = {"lists": (len(self._tips), self._tips.spent, self._tips.budget)}
        if self._decoded is not None:
            found = self._decoded
            usage["decoded"] = (len(found), found.spent, found.budget)
        if self._reads is not None:
            usage["reads"] = self._reads.usage()
        return usage

    # --- reading ------------------------------------------------------------------------
    @reading
    def load_metadata(self, row: CheckpointRow) -> dict[str, Any]:
        """The decoded metadata of a checkpoint row."""
        return self.serde.loads_typed((row[6], row[7]))

    @reading
    def load_checkpoint(self, row: CheckpointRow) -> Checkpoint:
        """The decoded checkpoint of a row, with empty ``channel_values``."""
        checkpoint = self.serde.loads_typed((row[4], row[5]))
        checkpoint["channel_values"] = {}
        return checkpoint

    @reading
    def load_tuple(
        self,
        row: CheckpointRow,
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        lookup: Callable[[BlobKey], Blob | None],
        writes: Sequence[WriteRow],
        *,
        inline: Mapping[str, Any] | None = None,
        piece: PieceLookup | None = None,
        thread_name: str | None = None,
        recalled: Recalled | None = None,
    ) -> CheckpointTuple:
        """A ``CheckpointTuple`` from a row, its decoded parts, a blob lookup and its writes.

        ``inline`` holds values stored in the checkpoint row itself (channel -> typed bytes),
        ``piece`` reads the pieces referenced by split values (see ``_pieces``),
        ``thread_name`` is the thread id when rows store the thread under a key,
        ``recalled`` what ``recall`` found for the fetched rows (and asks to remember reads).
        """
        thread_id, ns, checkpoint_id, parent_id = row[0], row[1], row[2], row[3]
        name = thread_name or thread_id
        values = checkpoint["channel_values"]
        for channel, version in checkpoint["channel_versions"].items():
            if inline and channel in inline:
                values[channel] = self.loads_inline(inline[channel], piece)
                continue
            key = (thread_id, ns, channel, self.blob_version(version))
            chain: list[tuple[str, int, int]] = []
            value = self._resolve(lookup, key, piece, chain, recalled)
            if value is not MISSING:
                values[channel] = value
                if chain and type(value) is list:
                    self._learn((thread_id, ns, channel), str(version), value, *chain[0])
        ordered = sorted(writes, key=lambda w: (w[8], w[3], w[4]))
        return CheckpointTuple(
            config=checkpoint_config(name, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=metadata,  # type: ignore[arg-type]
            parent_config=checkpoint_config(name, ns, parent_id) if parent_id else None,
            pending_writes=[(w[3], w[5], self.loads((w[6], w[7]), piece, w[2])) for w in ordered],
        )

    def blob_version(self, version: Any) -> str:
        """The ``version`` of the blob row holding a channel at ``version``."""
        return str(version)

    @reading
    def loads(self, typed: tuple[str, bytes], piece: PieceLookup | None, where: str = "") -> Any:
        """Decode a stored ``(type, bytes)``, joining split values back first."""
        if typed[0] == PIECED:
            typed = (MSGPACK, self._join(typed[1], piece, where))
        return self.serde.loads_typed(typed)

    @reading
    def loads_inline(self, stored: Any, piece: PieceLookup | None) -> Any:
        """Decode a value stored in a checkpoint row: ``bytes`` (msgpack), ``[bytes]`` (msgpack
        with pieces split off) or ``[type, bytes]``."""
        if type(stored) is bytes:
            return self.serde.loads_typed((MSGPACK, stored))
        if len(stored) == 1:
            return self.loads((PIECED, stored[0]), piece)
        return self.loads((stored[0], stored[1]), piece)

    def _join(self, skeleton: bytes, piece: PieceLookup | None, where: str) -> bytes:
        try:
            if piece is None:
                raise KeyError(b"")
            self._check_repetition(skeleton, piece)
            return join_pieces(skeleton, piece)
        except KeyError as missing:
            raise self._missing_piece(missing, where) from None

    @staticmethod
    def _missing_piece(missing: KeyError, where: str) -> SaverError:
        return SaverError(
            f"A stored value {where} references a piece that is missing "
            f"({bytes(missing.args[0]).hex() or 'no piece store'}).",
            code="SG417",
            hint="the thread's rows were deleted or changed by another process; re-run it",
        )

    def _check_repetition(self, skeleton: bytes, piece: PieceLookup) -> None:
        """Refuse a skeleton that repeats its pieces into more than ``max_expansion`` times
        its own bytes (each reference is 15 bytes; the same piece may be referenced often)."""
        total = distinct = 0
        seen: set[bytes] = set()
        for key in piece_refs(skeleton):
            data = piece(key)
            if data is None:
                raise KeyError(key)
            total += len(data)
            if key not in seen:
                seen.add(key)
                distinct += len(data)
        limits = limits_of(self.serde)
        # (``_pieces.split`` never repeats more than 1 MiB, the default allowance)
        allowed = limits.max_expansion * len(skeleton) + distinct + limits.expansion_allowance
        if total > allowed:
            raise limit_error(
                f"a stored value whose pieces repeat into {total} bytes from "
                f"{len(skeleton) + distinct} stored",
                "max_expansion",
                limits.max_expansion,
            )

    def _learn(
        self,
        key: tuple[str, str, str],
        version: str,
        items: list[Any],
        anchor: str,
        snapshot_bytes: int,
        delta_bytes: int,
    ) -> None:
        """A list read from storage becomes the delta base of its channel, unless a newer
        one is known: a process that resumes a thread stores its next append as a delta
        too, instead of a snapshot (which would make a chat resumed by a new process every
        turn grow with the square of its length).

        A read of the version the tip already holds swaps in the objects just read (equal to
        the stored ones), so the next put compares its unchanged prefix by identity."""
        tip = self._tips.get(key)
        if tip is None or _newer(version, tip.version):  # (a hint: a race only costs a snapshot)
            anchor_version = self.loaded_blob_version(anchor)
            learned = _Tip(version, anchor_version, items.copy(), snapshot_bytes, delta_bytes)
            self._remember([(key, learned)])
        elif tip.version == version and len(tip.items) == len(items):
            fresh = _Tip(version, tip.anchor, items.copy(), tip.snapshot_bytes, tip.delta_bytes)
            self._remember([(key, fresh)])

    def loaded_blob_version(self, stored: str) -> str:
        """The version a blob row's stored version stands for (``blob_version`` reversed)."""
        return stored

    def _resolve(
        self,
        lookup: Callable[[BlobKey], Blob | None],
        key: BlobKey,
        piece: PieceLookup | None = None,
        chain: list[tuple[str, int, int]] | None = None,
        recalled: Recalled | None = None,
    ) -> Any:
        """The value of a blob, following its delta chain; ``chain`` receives
        ``(snapshot version, snapshot bytes, delta bytes)`` of a list read that way.

        ``recalled`` (the reads memory's entries valid for the fetched rows, ``_chains``):
        the walk stops at a remembered row, and a list read from split rows only is
        remembered for the next read."""
        memo = recalled.get(key[:3]) if recalled else None
        walk = self._walk(lookup, key, piece, memo)
        if walk is None:
            return MISSING
        parts, walked, below = walk
        pieced = sum(1 for p in parts if p[0] == PIECED)
        if below is not None:
            elements, snapshot_bytes, delta_bytes = below[0].part(below[1])
            if chain is not None:
                delta_bytes += sum(map(_SIZE, parts))
                chain.append((below[0].snapshot, snapshot_bytes, delta_bytes))
            parts.append((PIECED, elements, 0))  # type: ignore[arg-type]
            pieced += 1
        elif chain is not None:
            chain.append((walked[-1][0], parts[-1][2], sum(map(_SIZE, parts[:-1]))))
        if pieced:
            flat = list(_flatten(data for typ, data, _ in reversed(parts) if typ == PIECED))
            value = self._load_elements(parts, flat, only_pieced=pieced == len(parts))
            if recalled is not None and pieced == len(parts) and self._reads is not None:
                own = [(p[1], p[2]) for p in (parts[:-1] if below is not None else parts)]
                self._reads.remember(key[:3], walked, own, below, flat)  # type: ignore[arg-type]
            return value
        loads = self.serde.loads_typed
        if len(parts) == 1:
            return loads(parts[0][:2])
        if self._plain_arrays and all(p[0] == MSGPACK for p in parts):
            joined = join_arrays([p[1] for p in reversed(parts)])
            if joined is not None:
                return loads((MSGPACK, joined))
        value = list(loads(parts[-1][:2]))
        for part in reversed(parts[:-1]):
            value.extend(loads(part[:2]))
        return value

    def _walk(
        self,
        lookup: Callable[[BlobKey], Blob | None],
        key: BlobKey,
        piece: PieceLookup | None,
        memo: tuple[ChainRead, int] | None,
    ) -> _Walk | None:
        """``(parts, rows walked, (memo, row) it stopped at)`` of a blob's delta chain, head
        first: a part is ``(type, data or split elements, bytes of its joined encoding)``;
        ``None`` when there is no value."""
        parts: list[tuple[str, Any, int]] = []
        walked: list[tuple[str, Blob]] = []
        seen: set[str] = set()
        while True:
            if key[3] in seen:
                raise SaverError(
                    f"Stored channel {key[2]!r} of thread {key[0]!r} is a delta chain that "
                    f"loops back to version {key[3]!r}.",
                    code="SG414",
                    hint="the rows were changed outside stepgraph; restore them or delete the "
                    "thread",
                )
            seen.add(key[3])
            if memo is not None:
                at = memo[0].position(key[3])
                if at is not None and at >= memo[1]:  # stored as read before: from memory
                    return parts, walked, (memo[0], at)
            blob = lookup(key)
            if blob is None:
                if not parts:
                    return None
                raise SaverError(
                    f"Stored channel {key[2]!r} of thread {key[0]!r} is a delta whose base "
                    f"version {key[3]!r} is missing.",
                    code="SG414",
                    hint="the thread was changed by another process mid-run; re-run it",
                )
            typ, data, base = blob
            if typ == EMPTY:
                return None
            found = None
            if typ == PIECED:
                found = self._elements(data, piece, key[2]) if self._decoded is not None else None
                if found is None:
                    typ, data = MSGPACK, self._join(data, piece, f"in channel {key[2]!r}")
            if found is not None:  # the list's elements: decoded (or cloned) one by one
                n = len(found)  # (``array_size``, inline: this runs once per chain row)
                size = (1 if n < 16 else 3 if n < 0x10000 else 5) + sum(map(len, found))
                parts.append((PIECED, found, size))
            else:
                parts.append((typ, data, len(data)))
            walked.append((key[3], blob))
            if base is None:
                return parts, walked, None
            key = (key[0], key[1], key[2], base)

    def _load_elements(
        self, parts: list[Any], flat: list[bytes], *, only_pieced: bool = False
    ) -> list[Any]:
        """A list from its parts, snapshot last; a ``PIECED`` part holds the encoded elements
        (all of them, in order: ``flat``), served by the decoded-elements cache
        (``_decoded``), the others are decoded whole."""
        assert self._decoded is not None
        loaded = self._decoded.load(flat, self._loads_array)
        if only_pieced:  # the usual chain: every row split
            return loaded
        value: list[Any] = []
        at = 0
        for typ, data, _ in reversed(parts):
            if typ == PIECED:
                value.extend(loaded[at : at + len(data)])
                at += len(data)
            else:
                value.extend(self.serde.loads_typed((typ, data)))
        return value

    def _loads_array(self, data: bytes) -> Any:
        return self.serde.loads_typed((MSGPACK, data))

    def _elements(
        self, skeleton: bytes, piece: PieceLookup | None, channel: str
    ) -> list[bytes] | None:
        """The encoded elements of a split list of ``channel`` (``_pieces.elements``), within
        the repetition limit; ``None`` when the skeleton is not a plain array."""
        try:
            if piece is None:
                raise KeyError(b"")
            found = split_elements(skeleton, piece)
        except KeyError as missing:
            raise self._missing_piece(missing, f"in channel {channel!r}") from None
        if found is None:
            return None
        items, keys = found
        if len(set(keys)) < len(keys):  # a piece referenced again: see _check_repetition
            self._check_repetition(skeleton, piece)
        return items
