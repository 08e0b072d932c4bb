"""The checkpoint data model helpers and the BaseCheckpointSaver defaults."""

from __future__ import annotations

import re
from typing import Any

import pytest

from stepgraph.checkpoint import (
    CHECKPOINT_FORMAT_VERSION,
    BaseCheckpointSaver,
    CheckpointTuple,
    SaverError,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from stepgraph.checkpoint.base import next_string_version, thread_target
from stepgraph.constants import MISSING
from stepgraph.errors import StepgraphError


class FakeChannel:
    """Just enough of a channel for create_checkpoint."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def checkpoint(self) -> Any:
        return self.value


def test_metadata_copies_primitive_config_values() -> None:
    """Config values are copied unless excluded, private, non-primitive or already set."""
    config = {
        "configurable": {"thread_id": "t", "checkpoint_id": "c", "user": "u\x00x", "flag": True,
                         "__pregel_x": 1, "obj": [1], "langgraph_step": 3},
        "metadata": {"m": 2.5, "source": "ignored"},
    }  # fmt: skip
    md = get_checkpoint_metadata(config, {"source": "loop", "step": 1, "note": "a\x00b"})
    assert md == {"source": "loop", "step": 1, "note": "ab", "m": 2.5, "user": "ux", "flag": True}


def test_empty_checkpoint_shape() -> None:
    """An empty checkpoint has format 4, a fresh id and no channels."""
    first, second = empty_checkpoint(), empty_checkpoint()
    assert first["v"] == CHECKPOINT_FORMAT_VERSION == 4
    assert first["id"] < second["id"]
    assert first["channel_values"] == first["channel_versions"] == first["versions_seen"] == {}
    assert first["updated_channels"] is None


def test_copy_checkpoint_is_independent() -> None:
    """Changing a copy's dicts (including versions_seen per node) leaves the original alone."""
    original = empty_checkpoint()
    original["versions_seen"] = {"node": {"a": 1}}
    copy = copy_checkpoint(original)
    copy["versions_seen"]["node"]["a"] = 2
    copy["channel_values"]["x"] = 1
    assert original["versions_seen"] == {"node": {"a": 1}}
    assert original["channel_values"] == {}


def test_create_checkpoint_reads_versioned_channels_with_values() -> None:
    """Only channels that have a version and a value end up in channel_values."""
    base = empty_checkpoint()
    base["channel_versions"] = {"a": 1, "empty": 1, "unknown": 1}
    channels: Any = {
        "a": FakeChannel(5),
        "empty": FakeChannel(MISSING),
        "unversioned": FakeChannel(7),
    }
    made = create_checkpoint(base, channels, 3, updated_channels=["a"])
    assert made["channel_values"] == {"a": 5}
    assert made["id"] != base["id"] and made["v"] == 4 and made["updated_channels"] == ["a"]
    assert create_checkpoint(base, None, 0, id="fixed")["id"] == "fixed"


def test_config_helpers() -> None:
    """get_checkpoint_id reads checkpoint_id (or thread_ts); thread_target needs a thread_id."""
    assert get_checkpoint_id(None) is None
    assert get_checkpoint_id({"configurable": {"thread_ts": "old"}}) == "old"
    assert thread_target({"configurable": {"thread_id": 7}}) == ("7", "", None)
    with pytest.raises(SaverError) as info:
        thread_target({"configurable": {"checkpoint_ns": ""}})
    assert info.value.code == "SG410"
    assert isinstance(info.value, StepgraphError) and isinstance(info.value, ValueError)
    assert "[SG410]" in str(info.value) and "Hint:" in str(info.value)


def test_string_versions_sort_as_counters() -> None:
    """next_string_version yields short sortable strings counting up from any current version."""
    first = next_string_version(None)
    assert re.fullmatch(r"0{11}1\.[0-9a-f]{6}", first)
    assert next_string_version(first).startswith("0" * 11 + "2.")
    assert next_string_version(41).startswith("0" * 10 + "42.")
    assert next_string_version("00000000000000000000000000000041.123456") > "0" * 11 + "41.ffffff"
    versions = [first]
    for _ in range(120):
        versions.append(next_string_version(versions[-1]))
    assert versions == sorted(versions)


class Minimal(BaseCheckpointSaver):
    """A saver implementing only get_tuple."""

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return CheckpointTuple(config, empty_checkpoint(), {})


async def test_base_saver_defaults() -> None:
    """Integer versions by default; get/aget go through get_tuple/aget_tuple; the rest raise."""
    saver = Minimal(serde=object())  # type: ignore[arg-type]
    assert saver.get_next_version(None) == 1 and saver.get_next_version(1) == 2
    assert saver.get({"configurable": {"thread_id": "t"}})["v"] == 4  # type: ignore[index]
    with pytest.raises(NotImplementedError):
        saver.put({}, empty_checkpoint(), {}, {})
    with pytest.raises(NotImplementedError):
        await saver.aget({})
    with pytest.raises(NotImplementedError):
        [t async for t in saver.alist(None)]


def test_delta_channel_history_walks_the_parent_chain() -> None:
    """Writes of the ancestors (not the target's own), oldest first, up to the nearest stored
    value (the seed); a fork's history follows its own branch; async gives the same."""
    import asyncio

    from stepgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}

    def put(parent: dict, cid: str, values: dict, version: int) -> dict:
        ckpt = {**empty_checkpoint(), "id": cid, "channel_values": values,
                "channel_versions": {"k": version}}
        return saver.put(parent, ckpt, {"step": version}, {"k": version})

    c1 = put(base, "1", {"k": ["seed"]}, 1)
    saver.put_writes(c1, [("k", "a")], "task1")
    c2 = put(c1, "2", {}, 2)
    saver.put_writes(c2, [("k", "b"), ("other", 1)], "task2")
    c3 = put(c2, "3", {}, 3)
    saver.put_writes(c3, [("k", "pending")], "task3")
    got = saver.get_delta_channel_history(config=c3, channels=["k", "none"])
    assert got["k"]["seed"] == ["seed"]
    assert [w[2] for w in got["k"]["writes"]] == ["a", "b"]
    assert got["none"] == {"writes": []}
    fork = put(c1, "2b", {}, 2)
    assert [w[2] for w in saver.get_delta_channel_history(config=fork, channels=["k"])["k"]["writes"]] == ["a"]
    assert saver.get_delta_channel_history(config=c3, channels=[]) == {}
    again = asyncio.run(saver.aget_delta_channel_history(config=c3, channels=["k"]))
    assert again["k"] == got["k"]
