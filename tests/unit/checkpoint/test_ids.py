"""Checkpoint ids: UUIDv6 strings that sort in creation order."""

from __future__ import annotations

import uuid

from stepgraph.checkpoint.base import uuid6


def test_ids_sort_in_creation_order() -> None:
    """Ids made one after another compare (as strings) in the order they were made."""
    ids = [str(uuid6()) for _ in range(2000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_are_version_6_rfc_uuids() -> None:
    """Ids parse as RFC 9562 UUIDs of version 6 carrying the given clock_seq and node."""
    made = uuid6(node=0xABCDEF, clock_seq=5)
    parsed = uuid.UUID(str(made))
    assert parsed.version == 6
    assert parsed.variant == uuid.RFC_4122
    assert parsed.clock_seq == 5
    assert parsed.node == 0xABCDEF


def test_negative_clock_seq_is_masked() -> None:
    """A negative clock_seq (the empty checkpoint uses -2) still yields a valid id."""
    assert uuid6(clock_seq=-2).clock_seq == (-2) & 0x3FFF
