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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stepgraph.checkpoint._lru import ENTRY_OVERHEAD, Lru

__all__ = ["ChainRead", "ChainReads", "Recalled"]

Channel = tuple[str, str, str]
"""``(thread_id, checkpoint_ns, channel)``."""
Row = tuple[str, tuple[str, bytes, str | None]]
"""``(version, (type, data, base_version))``: one blob row of a chain."""


@dataclass(frozen=True, slots=True)
class ChainRead:
    """One chain read before: its rows from the head down to the snapshot, and the elements."""

    rows: tuple[Row, ...]
    """Head first, the snapshot last."""
    at: dict[str, int]
    """Version -> its position in ``rows``."""
    ends: tuple[int, ...]
    """Elements in the list at each row's version."""
    sizes: tuple[int, ...]
    """Encoded bytes of each row's own elements (as one msgpack array)."""
    elements: list[bytes]
    """The encoded elements of the list at the head, snapshot first."""

    def part(self, at: int) -> tuple[list[bytes], int, int]:
        """``(elements, snapshot bytes, delta bytes)`` of the list at row ``at``'s version."""
        sizes = self.sizes
        return self.elements[: self.ends[at]], sizes[-1], sum(sizes[at:-1])

    @property
    def snapshot(self) -> str:
        """The version of the chain's snapshot."""
        return self.rows[-1][0]


Recalled = dict[Channel, tuple[ChainRead, int]]
"""``(entry, lowest usable position)`` per channel: rows from that position down are stored
exactly as remembered."""


class ChainReads:
    """The last chain read per ``(thread, ns, channel)`` (see the module docstring)."""

    def __init__(self, budget: int, max_items: int | None = None) -> None:
        self._lru = Lru(budget, max_items)

    def recall(self, blobs: Mapping[tuple[str, str, str, str], Any]) -> Recalled:
        """The entries still valid for the fetched ``blobs`` (``{BlobKey: Blob}``)."""
        found: Recalled = {}
        if not self._lru.items:
            return found
        for channel in {key[:3] for key in blobs}:
            entry = self._lru.get(channel)
            if entry is None:
                continue
            thread_id, ns, name = channel
            usable = len(entry.rows)
            for i in range(usable - 1, -1, -1):  # from the snapshot up: the rows a read uses
                version, blob = entry.rows[i]
                if blobs.get((thread_id, ns, name, version)) != blob:
                    break
                usable = i
            if usable < len(entry.rows):
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
        ``elements`` is the whole list (snapshot first)."""
        rows = list(walked)
        sizes = [size for _, size in parts]
        ends: list[int] = []
        count = len(elements)
        for own, _ in parts:
            ends.append(count)
            count -= len(own)
        if below is not None:
            entry, at = below
            rows.extend(entry.rows[at:])
            ends.extend(entry.ends[at:])
            sizes.extend(entry.sizes[at:])
        cost = ENTRY_OVERHEAD + 8 * len(elements) + sum(len(blob[1]) + 64 for _, blob in rows)
        cost += sum(map(len, elements))  # (shared with the other memories, but kept alive here)
        at_map = {version: i for i, (version, _) in enumerate(rows)}
        entry = ChainRead(tuple(rows), at_map, tuple(ends), tuple(sizes), elements)
        self._lru.put(channel, entry, cost)

    def forget_thread(self, thread_id: str) -> None:
        """Drop the entries of a deleted thread."""
        self._lru.drop(lambda key: key[0] == thread_id)

    def usage(self) -> tuple[int, int, int]:
        """``(entries, bytes, budget)``."""
        return len(self._lru), self._lru.spent, self._lru.budget
