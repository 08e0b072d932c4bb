"""The delta chains of split lists read before, so the next read walks only what is new.

A chat reads its messages at every turn. The newest version is a delta row (the last turn's
messages) on top of the version read the turn before, itself the end of a chain of deltas
down to a snapshot (``_codec``). ``ChainReads`` remembers, per ``(thread, ns, channel)``, the
rows of the last chain read and the encoded elements the list held at each of them. The next
read walks its chain only down to a remembered row and takes the elements below it from the
memory: the rows of the unchanged history are not split, their pieces not looked up or
fetched, their elements not gathered again (the elements are then served by
``DecodedElements`` as before).

Safety: the memory is never trusted by key alone. Before a read uses it, every remembered
row is compared with the row just fetched (type, bytes and base version, compared in C), and
a remembered row counts only when it and every row below it are still stored exactly so
(``recall``). A read with the memory therefore returns what a full walk of the stored rows
returns; a thread changed by another process (or deleted and written again) only costs a
full walk. Entries are bounded by bytes (``_lru.SHARES["reads"]``) and dropped with their
thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stepgraph.checkpoint._lru import ENTRY_OVERHEAD, Lru

__all__ = ["ChainRead", "ChainReads", "Recalled"]

Channel = tuple[str, str, str]
"""``(thread_id, checkpoint_ns, channel)``."""
Blob = tuple[str, bytes, str | None]
"""``(type, data, base_version)``: one blob row of a chain."""
Row = tuple[str, Blob]
"""``(version, blob)``."""
Key = tuple[str, str, str, str]
"""``(thread_id, checkpoint_ns, channel, version)``: a blob row's key."""
_ROW_COST = 64
"""Bytes an entry is counted for per row, besides the row's data."""


@dataclass(frozen=True, slots=True)
class ChainRead:
    """One chain read before: its rows from the head down to the snapshot, and the elements.

    Held so that the next read costs little for the rows it shares with this one: ``recall``
    compares ``blobs`` with the fetched rows in one list comparison, and ``remember`` copies
    ``depth`` (positions counted from the snapshot stay valid when rows are added on top)."""

    keys: tuple[Key, ...]
    """The rows' keys, head first, the snapshot last."""
    blobs: list[Blob]
    """The rows as read, in the order of ``keys``."""
    depth: dict[str, int]
    """Version -> its position counted from the snapshot (``0``)."""
    ends: tuple[int, ...]
    """Elements in the list at each row's version."""
    sizes: tuple[int, ...]
    """Encoded bytes of each row's own elements (as one msgpack array)."""
    elements: list[bytes]
    """The encoded elements of the list at the head, snapshot first."""
    row_bytes: int
    """What the rows count for in the entry's cost."""

    def position(self, version: str) -> int | None:
        """The position of ``version``'s row in ``keys`` (head first), if it is one."""
        depth = self.depth.get(version)
        return None if depth is None else len(self.keys) - 1 - depth

    def part(self, at: int) -> tuple[list[bytes], int, int]:
        """``(elements, snapshot bytes, delta bytes)`` of the list at row ``at``'s version."""
        sizes = self.sizes
        return self.elements[: self.ends[at]], sizes[-1], sum(sizes[at:-1])

    @property
    def snapshot(self) -> str:
        """The version of the chain's snapshot."""
        return self.keys[-1][3]


Recalled = dict[Channel, tuple[ChainRead, int]]
"""``(entry, lowest usable position)`` per channel: rows from that position down are stored
exactly as remembered."""


def _usable(entry: ChainRead, blobs: Mapping[Key, Blob]) -> int:
    """The lowest position from which ``entry``'s rows down to its snapshot are all stored as
    remembered (``len(entry.keys)``: none are)."""
    stored = list(map(blobs.get, entry.keys))
    if stored == entry.blobs:  # (the usual read: compared in C)
        return 0
    usable = len(stored)
    for i in range(usable - 1, -1, -1):  # from the snapshot up: the rows a read uses
        if stored[i] != entry.blobs[i]:
            break
        usable = i
    return usable


def _row_bytes(blobs: list[Blob]) -> int:
    return sum(len(blob[1]) for blob in blobs) + _ROW_COST * len(blobs)


class ChainReads:
    """The last chain read per ``(thread, ns, channel)`` (see the module docstring)."""

    def __init__(self, budget: int, max_items: int | None = None) -> None:
        self._lru = Lru(budget, max_items)

    def recall(
        self, blobs: Mapping[Key, Blob], channels: Iterable[Channel] | None = None
    ) -> Recalled:
        """The entries still valid for the fetched ``blobs`` (``{BlobKey: Blob}``) of
        ``channels`` (by default, those of ``blobs``)."""
        found: Recalled = {}
        if not self._lru.items:
            return found
        for channel in {key[:3] for key in blobs} if channels is None else channels:
            entry = self._lru.get(channel)
            if entry is not None:
                usable = _usable(entry, blobs)
                if usable < len(entry.keys):
                    found[channel] = (entry, usable)
        return found

    def remember(
        self,
        channel: Channel,
        walked: list[Row],
        parts: list[tuple[list[bytes], int]],
        below: tuple[ChainRead, int] | None,
        elements: list[bytes],
    ) -> None:
        """Record a read: the rows ``walked`` (head first) with their ``parts`` (``(elements,
        encoded bytes)`` each), on top of row ``below[1]`` of a recalled entry, if any;
        ``elements`` is the whole list (snapshot first). Costs the rows walked, plus copies
        (in C) of what the entry below holds."""
        thread_id, ns, name = channel
        keys = [(thread_id, ns, name, version) for version, _ in walked]
        blobs = [blob for _, blob in walked]
        row_bytes = _row_bytes(blobs)
        sizes = [size for _, size in parts]
        ends: list[int] = []
        count = len(elements)
        for own, _ in parts:
            ends.append(count)
            count -= len(own)
        if below is None:
            depth: dict[str, int] = {}
        else:
            entry, at = below
            keys.extend(entry.keys[at:])
            blobs.extend(entry.blobs[at:])
            ends.extend(entry.ends[at:])
            sizes.extend(entry.sizes[at:])
            depth = entry.depth.copy()
            row_bytes += entry.row_bytes
            if at:  # rows above the one the walk stopped at are not in this chain
                for key in entry.keys[:at]:
                    del depth[key[3]]
                row_bytes -= _row_bytes(entry.blobs[:at])
        for version, _ in reversed(walked):
            depth[version] = len(depth)
        cost = ENTRY_OVERHEAD + 8 * len(elements) + row_bytes
        cost += sum(map(len, elements))  # (shared with the other memories, but kept alive here)
        read = ChainRead(tuple(keys), blobs, depth, tuple(ends), tuple(sizes), elements, row_bytes)
        self._lru.put(channel, read, cost)

    def forget_thread(self, thread_id: str) -> None:
        """Drop the entries of a deleted thread."""
        self._lru.drop(lambda key: key[0] == thread_id)

    def usage(self) -> tuple[int, int, int]:
        """``(entries, bytes, budget)``."""
        return len(self._lru), self._lru.spent, self._lru.budget
