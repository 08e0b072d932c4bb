"""``CheckpointImage``: what the last checkpoint holds, kept up to date at the cost of a step.

A checkpoint lists the value and version of every channel and the versions every node has
seen. Rebuilding that each step visits every channel of the graph: on a 1000-node chain
that is a million ``checkpoint()`` calls per run. The image instead keeps the three maps of
the last checkpoint and, after a step, refreshes only what ``apply_writes`` reports it
touched (``apply.Touched``): the channels given a new version and the nodes that ran. A
checkpoint is then shallow copies of the maps (C speed), and ``durability="exit"`` copies
nothing until the end of the run.

Anything else that moves channels or versions (the input, ``update_state``, a fork, a
restore) rebuilds the image from the loop, once. With ``STEPGRAPH_CHECK_IMAGE=1`` every
refresh is compared with a full rebuild and a difference raises (used by the test suite).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from stepgraph.constants import INTERRUPT, MISSING

if TYPE_CHECKING:
    from stepgraph.engine.apply import Touched
    from stepgraph.engine.loop import RunLoop

_CHECK = os.environ.get("STEPGRAPH_CHECK_IMAGE", "") not in ("", "0")


class CheckpointImage:
    """Channel values, channel versions and seen versions as of the last checkpoint.

    The maps are private: a checkpoint gets copies of them (``values``/``versions`` shallow,
    ``seen`` with inner maps shared between checkpoints, never changed in place).
    """

    __slots__ = ("values", "versions", "seen", "valid", "_interrupt")

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.versions: dict[str, Any] = {}
        self.seen: dict[str, dict[str, Any]] = {}
        self.valid = False
        """The maps match the loop as of its last checkpoint (else ``rebuild`` first)."""
        self._interrupt: Any = None
        """The loop's ``seen[INTERRUPT]`` map last copied (it is replaced, never changed)."""

    def restored(self, versions: dict[str, Any]) -> None:
        """The loop was loaded from a checkpoint with these versions (values not known)."""
        self.versions = dict(versions)
        self.valid = False

    def rebuild(self, loop: RunLoop) -> dict[str, Any]:
        """Read every channel of ``loop``; returns the versions that differ from before."""
        previous = self.versions
        versions = loop.versions
        values: dict[str, Any] = {}
        for k, ch in loop.channels.items():
            if k in versions:
                v = ch.checkpoint()
                if v is not MISSING:
                    values[k] = v
        self.values = values
        self.versions = dict(versions)
        self.seen = {k: dict(v) for k, v in loop.seen.items()}
        self._interrupt = loop.seen.get(INTERRUPT)
        self.valid = True
        return {k: v for k, v in versions.items() if previous.get(k) != v}

    def advance(self, loop: RunLoop, touched: Touched) -> dict[str, Any]:
        """Refresh what ``touched`` names (then cleared); returns their new versions."""
        channels = loop.channels
        versions = loop.versions
        values = self.values
        mine = self.versions
        new: dict[str, Any] = {}
        for k in touched.channels:
            version = versions.get(k)
            if version is None:  # (a version is never removed; guard anyway)
                continue
            new[k] = mine[k] = version
            ch = channels.get(k)
            v = ch.checkpoint() if ch is not None else MISSING
            if v is MISSING:
                values.pop(k, None)
            else:
                values[k] = v
        seen = loop.seen
        mine_seen = self.seen
        for name in touched.seen:
            s = seen.get(name)
            if s is not None:
                mine_seen[name] = dict(s)
        interrupt = seen.get(INTERRUPT)
        if interrupt is not self._interrupt:
            self._interrupt = interrupt
            if interrupt is None:
                mine_seen.pop(INTERRUPT, None)
            else:
                mine_seen[INTERRUPT] = dict(interrupt)
        touched.clear()
        if _CHECK:
            self._check(loop)
        return new

    def _check(self, loop: RunLoop) -> None:
        """Compare with a full rebuild (``STEPGRAPH_CHECK_IMAGE=1``)."""
        fresh = CheckpointImage()
        fresh.rebuild(loop)
        problems = []
        if fresh.versions != self.versions:
            diff = {k for k in fresh.versions.keys() | self.versions.keys()
                    if fresh.versions.get(k) != self.versions.get(k)}
            problems.append(f"versions differ at {sorted(diff)[:10]}")
        if fresh.values.keys() != self.values.keys() or any(
            fresh.values[k] is not self.values[k] and fresh.values[k] != self.values[k]
            for k in fresh.values
        ):
            problems.append("values differ")
        if fresh.seen != self.seen:
            problems.append("seen versions differ")
        if problems:
            raise AssertionError(f"checkpoint image out of date: {'; '.join(problems)}")
