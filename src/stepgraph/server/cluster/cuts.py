"""Which published events of a run are committed: commit tags and takeover cuts.

A worker publishes a run's events as they happen (live readers get them at once), before
the step that produced them has committed. When the worker dies (or loses its lease) the
next holder re-executes the steps that did not commit, so their events would be in the
run's stream twice. This module decides, for a reader, which of them to skip:

- **Tags.** Each event a worker publishes carries the tag ``"<epoch>:<n>"``: its lease
  epoch and the number of the next fenced commit of that execution (``Lease.next_commit``).
  A commit takes its number *before* it starts, waits until every event published so far
  (tags up to that number) is in the shared store, then records the number in the queue row
  in the same transaction as the fence (``commits``), so events of a committed step are
  never lost with their worker either.
- **Cuts.** A worker that takes a run over reads, from its claim, the ``commits`` the
  previous epoch reached, and writes the cut ``{epoch: commits}`` to the store before its
  first event. Events of a cut epoch with a tag above the cut executed without committing.
- **Readers** (``Committed``) skip those. Events without a tag (the run's first
  ``metadata``, written at admission) are always kept. A reader that is live when a
  takeover happens has already sent the superseded events (delivery stays at least once
  for it); a reader that replays or joins later sees each committed step's events once.

Precision: exact for steps of one task. In a step with parallel tasks, events of a task
cut while a sibling's writes committed are kept (the commit covers a position in the
stream, not a task), so a replay may show them twice; nothing committed is ever skipped.
Pure functions and one small class: every dialect's event store uses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stepgraph.server.runtime.eventlog import Event

__all__ = ["Committed", "TaggedEvent", "make_tag", "parse_tag"]


@dataclass(frozen=True, slots=True)
class TaggedEvent(Event):
    """An event read from a shared store, with the tag its worker gave it (``None``: untagged)."""

    tag: str | None = None


def make_tag(epoch: int, commit: int) -> str:
    return f"{epoch}:{commit}"


def parse_tag(tag: str | None) -> tuple[int, int] | None:
    """``(epoch, commit)`` of a tag; ``None`` for an untagged or unreadable one (kept)."""
    if not tag:
        return None
    epoch, _, commit = tag.partition(":")
    try:
        return int(epoch), int(commit)
    except ValueError:
        return None


class Committed:
    """A reader's filter: which events of a run's stream executed in a committed step."""

    def __init__(self, cuts: Mapping[int, int] | None = None) -> None:
        self.cuts: dict[int, int] = dict(cuts or {})
        self.newest_epoch = 0
        """The highest epoch seen in a tag: an event of a later epoch means a takeover
        happened since the cuts were read (``needs_refresh``)."""
        self.skipped = 0

    def needs_refresh(self, events: Iterable[Event]) -> bool:
        """Whether ``events`` hold an epoch newer than any seen (read the cuts again first)."""
        top = self.newest_epoch
        for event in events:
            parsed = parse_tag(getattr(event, "tag", None))
            if parsed is not None and parsed[0] > top:
                top = parsed[0]
        if top > self.newest_epoch:
            self.newest_epoch = top
            return top > 1  # epoch 1 is never cut before epoch 2 exists
        return False

    def keep(self, event: Event) -> bool:
        parsed = parse_tag(getattr(event, "tag", None))
        if parsed is None:
            return True
        epoch, commit = parsed
        cut = self.cuts.get(epoch)
        if cut is None or commit <= cut:
            return True
        self.skipped += 1
        return False
