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


def test_stored_forms_are_unchanged() -> None:
    """The stored forms of ids and versions are a storage format: rows written before read
    back the same (values pinned from the first implementation)."""
    from stepgraph.checkpoint._ids import loaded_id, loaded_version, stored_id, stored_version

    pinned_ids = {
        "1f1ee6e6-6e0f-60b4-8032-f62e92b91249": "~-U6iQaQVxVh7-mxXuHiG88",
        "ffffffff-ffff-6fff-bfff-ffffffffffff": "~2zzzzzzzxjzvzzzzzzzzzz",
    }
    pinned_versions = {"000000000052.0d4b09": "=------o2Jg8", "999999999999.ffffff": "=DYJdFzzzzzz"}
    for loaded, stored in {**pinned_ids, **pinned_versions}.items():
        assert (stored_id if loaded in pinned_ids else stored_version)(loaded) == stored
        assert (loaded_id if loaded in pinned_ids else loaded_version)(stored) == loaded
