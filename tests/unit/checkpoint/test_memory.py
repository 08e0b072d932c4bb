"""InMemorySaver specifics: LangGraph's storage layout and sharing of unchanged blobs."""

from __future__ import annotations

import pytest

from stepgraph.checkpoint.base import SaverError
from stepgraph.checkpoint.memory import InMemorySaver, MemorySaver
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config


def test_layout_matches_langgraph_keys() -> None:
    """storage, blobs and writes are keyed as in LangGraph's InMemorySaver."""
    saver = InMemorySaver()
    cp, new = next_checkpoint(saver, None, {"a": 1, "b": [1]})
    config = saver.put(thread_config("t", "ns"), cp, {"step": 0}, new)
    saver.put_writes(config, [("a", 2)], "task", "path")
    typed_cp, typed_md, parent = saver.storage["t"]["ns"][cp["id"]]
    assert parent is None and isinstance(typed_cp[1], bytes) and isinstance(typed_md[1], bytes)
    assert set(saver.blobs) == {("t", "ns", ch, str(v)) for ch, v in new.items()}
    (write,) = saver.writes[("t", "ns", cp["id"])].items()
    assert write[0] == ("task", 0) and write[1][:2] == ("task", "a") and write[1][3] == "path"


def test_only_new_versions_store_blobs() -> None:
    """A put stores blobs for new_versions only; unchanged values are shared."""
    saver = InMemorySaver()
    cp, new = next_checkpoint(saver, None, {"big": "x" * 1000, "n": 0})
    config = saver.put(thread_config("t"), cp, {}, new)
    for i in range(1, 5):
        cp, new = next_checkpoint(saver, cp, {"n": i})
        config = saver.put(config, cp, {}, new)
    assert sum(key[2] == "big" for key in saver.blobs) == 1
    found = saver.get_tuple(thread_config("t"))
    assert found is not None and found.checkpoint["channel_values"] == {"big": "x" * 1000, "n": 4}


async def test_alias_and_context_managers() -> None:
    """MemorySaver is InMemorySaver, usable with ``with`` and ``async with``."""
    assert MemorySaver is InMemorySaver
    with InMemorySaver() as saver:
        assert saver.get_tuple(thread_config("t")) is None
    async with InMemorySaver() as saver:
        assert await saver.aget_tuple(thread_config("t")) is None


def test_put_writes_keeps_first_regular_and_last_special_writes_in_order() -> None:
    """put_writes (made without a plan): regular writes keep the first stored per idx, special
    ones (interrupts, errors) overwrite; a task's regular writes come before its special ones."""
    saver = InMemorySaver()
    cp, new = next_checkpoint(saver, None, {"a": 1})
    config = saver.put(thread_config("t"), cp, {}, new)
    saver.put_writes(config, [("__interrupt__", "i1"), ("a", 1), ("b", 2)], "task", "p")
    saver.put_writes(config, [("a", 9), ("__interrupt__", "i2")], "task", "p")
    bucket = saver.writes[("t", "", cp["id"])]
    assert list(bucket) == [("task", 1), ("task", 2), ("task", -3), ("task", 0)]
    got = {k: (v[1], saver.serde.loads_typed(v[2])) for k, v in bucket.items()}
    assert got[("task", 0)] == ("a", 9)  # idx 0 was the interrupt in the first call: free
    assert got[("task", 1)] == ("a", 1) and got[("task", 2)] == ("b", 2)
    assert got[("task", -3)] == ("__interrupt__", "i2")
    pending = saver.get_tuple(config).pending_writes
    assert ("task", "__interrupt__", "i2") in pending
    saver.put_writes(config, [], "task")  # nothing stored, no bucket made
    with pytest.raises(SaverError):
        saver.put_writes(thread_config("t"), [("a", 1)], "task")  # no checkpoint id
    with pytest.raises(SaverError):
        saver.put_writes(thread_config("t"), [], "task")
