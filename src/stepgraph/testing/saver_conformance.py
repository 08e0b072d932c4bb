"""A conformance suite any checkpoint saver can run (needs pytest and pytest-asyncio).

Subclass ``SaverConformance`` in a test module and give it a ``saver`` fixture (sync or
async) that yields a fresh, empty saver::

    class TestMySaver(SaverConformance):
        @pytest.fixture
        def saver(self):
            return MySaver()

Every test is written once and runs twice: through the sync API (called from a worker
thread, so savers bound to an event loop work too) and through the async twins.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from stepgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointTuple,
    SaverError,
    copy_checkpoint,
    empty_checkpoint,
    uuid6,
)
from stepgraph.constants import ERROR, INTERRUPT, RESUME, SCHEDULED

__all__ = ["SaverAPI", "SaverConformance", "next_checkpoint", "thread_config"]

_ids = itertools.count()


def thread_config(thread_id: str, ns: str = "", checkpoint_id: str | None = None) -> dict:
    """A config addressing a thread (and optionally a namespace and checkpoint)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def next_checkpoint(
    saver: BaseCheckpointSaver, prev: Checkpoint | None, updates: dict[str, Any]
) -> tuple[Checkpoint, ChannelVersions]:
    """The checkpoint after ``prev`` with ``updates`` applied, and its new versions."""
    cp = copy_checkpoint(prev) if prev is not None else empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=next(_ids)))
    cp["ts"] = datetime.now(UTC).isoformat()
    new_versions: ChannelVersions = {}
    for channel, value in updates.items():
        version = saver.get_next_version(cp["channel_versions"].get(channel), None)
        new_versions[channel] = cp["channel_versions"][channel] = version
        cp["channel_values"][channel] = value
        cp["versions_seen"].setdefault("node", {})[channel] = version
    cp["updated_channels"] = sorted(updates)
    return cp, new_versions


class SaverAPI:
    """Calls a saver through its sync API (in a worker thread) or its async API."""

    def __init__(self, saver: BaseCheckpointSaver, mode: str) -> None:
        self.saver = saver
        self.mode = mode

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "async":
            return await getattr(self.saver, "a" + name)(*args, **kwargs)
        return await asyncio.to_thread(getattr(self.saver, name), *args, **kwargs)

    async def put(self, config: dict, cp: Checkpoint, metadata: dict, new: ChannelVersions):
        return await self._call("put", config, cp, metadata, new)

    async def put_writes(self, config: dict, writes: list, task_id: str, task_path: str = ""):
        return await self._call("put_writes", config, writes, task_id, task_path)

    async def get_tuple(self, config: dict) -> CheckpointTuple | None:
        return await self._call("get_tuple", config)

    async def get(self, config: dict) -> Checkpoint | None:
        return await self._call("get", config)

    async def delete_thread(self, thread_id: str) -> None:
        return await self._call("delete_thread", thread_id)

    async def list(self, config: dict | None, **kwargs: Any) -> list[CheckpointTuple]:
        if self.mode == "async":
            return [t async for t in self.saver.alist(config, **kwargs)]
        return await asyncio.to_thread(lambda: list(self.saver.list(config, **kwargs)))

    async def chain(
        self, thread_id: str, steps: list[dict[str, Any]], ns: str = "", **metadata: Any
    ) -> list[tuple[dict, Checkpoint]]:
        """Put one checkpoint per ``steps`` entry (each the channel updates of that step)."""
        config, prev, saved = thread_config(thread_id, ns), None, []
        for step, updates in enumerate(steps):
            cp, new = next_checkpoint(self.saver, prev, updates)
            md = {"source": "loop", "step": step, "parents": {}, **metadata}
            config = await self.put(config, cp, md, new)
            saved.append((config, cp))
            prev = cp
        return saved


def _ids_of(tuples: list[CheckpointTuple]) -> list[str]:
    return [t.config["configurable"]["checkpoint_id"] for t in tuples]


class SaverConformance:
    """The behaviour every stepgraph (and LangGraph) checkpoint saver must have."""

    pytestmark = pytest.mark.asyncio

    @pytest.fixture(params=["sync", "async"])
    def api(self, request: pytest.FixtureRequest, saver: BaseCheckpointSaver) -> SaverAPI:
        return SaverAPI(saver, request.param)

    # --- put / get_tuple ----------------------------------------------------------------
    async def test_get_tuple_of_unknown_thread_is_none(self, api: SaverAPI) -> None:
        """Reading a thread that has no checkpoint returns None."""
        assert await api.get_tuple(thread_config("nobody")) is None
        assert await api.get(thread_config("nobody")) is None

    async def test_put_returns_config_of_saved_checkpoint(self, api: SaverAPI) -> None:
        """put returns thread_id, checkpoint_ns and the checkpoint's id."""
        cp, new = next_checkpoint(api.saver, None, {"a": 1})
        config = await api.put(thread_config("t", "ns1"), cp, {"step": -1}, new)
        assert config["configurable"] == {
            "thread_id": "t", "checkpoint_ns": "ns1", "checkpoint_id": cp["id"],
        }  # fmt: skip

    async def test_get_tuple_returns_latest(self, api: SaverAPI) -> None:
        """Without checkpoint_id, get_tuple returns the newest checkpoint and its values."""
        saved = await api.chain("t", [{"a": 1}, {"a": 2, "b": "x"}, {"a": 3}])
        found = await api.get_tuple(thread_config("t"))
        assert found is not None
        assert found.config == saved[-1][0]
        assert found.checkpoint["channel_values"] == {"a": 3, "b": "x"}
        assert found.metadata["step"] == 2

    async def test_get_tuple_by_id(self, api: SaverAPI) -> None:
        """With checkpoint_id, get_tuple returns exactly that checkpoint."""
        saved = await api.chain("t", [{"a": 1}, {"a": 2}, {"a": 3}])
        found = await api.get_tuple(saved[0][0])
        assert found is not None and found.checkpoint["channel_values"] == {"a": 1}
        assert await api.get_tuple(thread_config("t", checkpoint_id="missing-id")) is None

    async def test_checkpoint_fields_round_trip(self, api: SaverAPI) -> None:
        """id, ts, v, versions, versions_seen and updated_channels come back unchanged."""
        (_, cp), *_ = await api.chain("t", [{"a": [1, 2], "b": {"k": None}}])
        found = await api.get_tuple(thread_config("t"))
        assert found is not None
        assert found.checkpoint == cp

    async def test_parent_config(self, api: SaverAPI) -> None:
        """The parent is the checkpoint named by the config passed to put."""
        saved = await api.chain("t", [{"a": 1}, {"a": 2}])
        first = await api.get_tuple(saved[0][0])
        second = await api.get_tuple(saved[1][0])
        assert first is not None and first.parent_config is None
        assert second is not None and second.parent_config == saved[0][0]

    async def test_unchanged_channels_are_read_from_older_versions(self, api: SaverAPI) -> None:
        """Channels not in new_versions keep the value stored with their current version."""
        await api.chain("t", [{"a": "A", "b": "B"}, {"b": "B2"}, {"c": 3}])
        found = await api.get_tuple(thread_config("t"))
        assert found is not None
        assert found.checkpoint["channel_values"] == {"a": "A", "b": "B2", "c": 3}

    async def test_channel_version_without_value_is_absent(self, api: SaverAPI) -> None:
        """A new version whose channel has no value reads back as an absent channel."""
        cp, new = next_checkpoint(api.saver, None, {"a": 1, "gone": 2})
        del cp["channel_values"]["gone"]
        await api.put(thread_config("t"), cp, {}, new)
        found = await api.get_tuple(thread_config("t"))
        assert found is not None and found.checkpoint["channel_values"] == {"a": 1}

    async def test_values_are_not_aliased(self, api: SaverAPI) -> None:
        """Mutating a value after put, or a value read back, never changes what is stored."""
        items = [{"n": 1}]
        cp, new = next_checkpoint(api.saver, None, {"items": items})
        await api.put(thread_config("t"), cp, {}, new)
        items[0]["n"] = 99
        items.append({"n": 2})
        found = await api.get_tuple(thread_config("t"))
        assert found is not None and found.checkpoint["channel_values"]["items"] == [{"n": 1}]
        found.checkpoint["channel_values"]["items"].append("junk")
        again = await api.get_tuple(thread_config("t"))
        assert again is not None and again.checkpoint["channel_values"]["items"] == [{"n": 1}]

    async def test_namespaces_are_separate(self, api: SaverAPI) -> None:
        """Each checkpoint_ns of a thread has its own latest checkpoint."""
        await api.chain("t", [{"a": "root"}])
        await api.chain("t", [{"a": "child"}], ns="sub:1")
        root = await api.get_tuple(thread_config("t"))
        child = await api.get_tuple(thread_config("t", "sub:1"))
        assert root is not None and root.checkpoint["channel_values"] == {"a": "root"}
        assert child is not None and child.checkpoint["channel_values"] == {"a": "child"}

    async def test_missing_thread_id_is_a_coded_error(self, api: SaverAPI) -> None:
        """A config without thread_id raises SaverError SG410."""
        cp, new = next_checkpoint(api.saver, None, {"a": 1})
        with pytest.raises(SaverError) as info:
            await api.get_tuple({"configurable": {}})
        assert info.value.code == "SG410"
        with pytest.raises(SaverError):
            await api.put({}, cp, {}, new)

    # --- metadata and versions ----------------------------------------------------------
    async def test_metadata_copies_config_values(self, api: SaverAPI) -> None:
        """Primitive config values are copied into metadata, except excluded and __ keys."""
        cp, new = next_checkpoint(api.saver, None, {"a": 1})
        config = {
            "configurable": {"thread_id": "t", "checkpoint_ns": "", "user": "u\x00",
                             "__secret": 1, "checkpoint_map": {}, "obj": object()},
            "metadata": {"m": 2, "step": 99, "langgraph_node": "x"},
        }  # fmt: skip
        await api.put(config, cp, {"source": "input", "step": -1, "parents": {}}, new)
        found = await api.get_tuple(thread_config("t"))
        assert found is not None
        assert found.metadata == {"source": "input", "step": -1, "parents": {}, "m": 2, "user": "u"}

    async def test_get_next_version_is_monotonic(self, api: SaverAPI) -> None:
        """Versions from get_next_version strictly increase, starting from None."""
        versions = [api.saver.get_next_version(None, None)]
        for _ in range(20):
            versions.append(api.saver.get_next_version(versions[-1], None))
        assert all(a < b for a, b in itertools.pairwise(versions))

    # --- list ---------------------------------------------------------------------------
    async def test_list_is_newest_first(self, api: SaverAPI) -> None:
        """list yields the thread's checkpoints newest first, with their values."""
        saved = await api.chain("t", [{"a": i} for i in range(5)])
        listed = await api.list(thread_config("t"))
        assert _ids_of(listed) == [c["configurable"]["checkpoint_id"] for c, _ in saved[::-1]]
        assert [t.checkpoint["channel_values"]["a"] for t in listed] == [4, 3, 2, 1, 0]

    async def test_list_filters_on_metadata(self, api: SaverAPI) -> None:
        """filter keeps checkpoints whose metadata has equal values for every key."""
        await api.chain("t", [{"a": i} for i in range(4)], run="r1")
        assert [t.metadata["step"] for t in await api.list(None, filter={"step": 2})] == [2]
        assert len(await api.list(None, filter={"run": "r1", "source": "loop"})) == 4
        assert await api.list(None, filter={"run": "r2"}) == []
        assert await api.list(None, filter={"nokey": None}) == []

    async def test_list_before_and_limit(self, api: SaverAPI) -> None:
        """before keeps older checkpoints only; limit caps the count (also after filter)."""
        saved = await api.chain("t", [{"a": i} for i in range(5)])
        older = await api.list(thread_config("t"), before=saved[2][0])
        assert [t.checkpoint["channel_values"]["a"] for t in older] == [1, 0]
        assert len(await api.list(thread_config("t"), limit=2)) == 2
        assert await api.list(thread_config("t"), limit=0) == []
        limited = await api.list(thread_config("t"), filter={"source": "loop"}, limit=3)
        assert [t.metadata["step"] for t in limited] == [4, 3, 2]

    async def test_list_with_checkpoint_id_returns_that_one(self, api: SaverAPI) -> None:
        """A config naming a checkpoint_id lists only that checkpoint."""
        saved = await api.chain("t", [{"a": 1}, {"a": 2}])
        assert _ids_of(await api.list(saved[0][0])) == [saved[0][1]["id"]]

    async def test_list_namespaces(self, api: SaverAPI) -> None:
        """Without checkpoint_ns list covers all namespaces; with one, only that one."""
        await api.chain("t", [{"a": 1}, {"a": 2}])
        await api.chain("t", [{"a": 3}], ns="sub:1")
        everything = await api.list({"configurable": {"thread_id": "t"}})
        assert sorted(t.config["configurable"]["checkpoint_ns"] for t in everything) == [
            "", "", "sub:1"
        ]  # fmt: skip
        assert len(await api.list(thread_config("t", ""))) == 2
        assert len(await api.list(thread_config("t", "sub:1"))) == 1

    async def test_list_none_covers_every_thread(self, api: SaverAPI) -> None:
        """list(None) returns the checkpoints of every thread."""
        await api.chain("t1", [{"a": 1}])
        await api.chain("t2", [{"a": 2}, {"a": 3}])
        listed = await api.list(None)
        assert sorted(t.config["configurable"]["thread_id"] for t in listed) == ["t1", "t2", "t2"]

    async def test_long_and_odd_thread_ids(self, api: SaverAPI) -> None:
        """UUID-like, '#'-prefixed and unicode thread ids round-trip through put, writes,
        get_tuple, list (also list(None)) and delete_thread, each kept apart."""
        ids = ["5b0c1a52-7a0e-4f3e-9d55-3c1f2e0b9a77", "#1", "#2", "thread·ünïcode·" * 3, "x"]
        for n, thread_id in enumerate(ids):
            saved = await api.chain(thread_id, [{"m": [n]}, {"m": [n, n + 1]}])
            await api.put_writes(saved[-1][0], [("a", n), ("b", n)], "task")
            assert saved[-1][0]["configurable"]["thread_id"] == thread_id
        for n, thread_id in enumerate(ids):
            found = await api.get_tuple(thread_config(thread_id))
            assert found is not None and found.config["configurable"]["thread_id"] == thread_id
            assert found.checkpoint["channel_values"] == {"m": [n, n + 1]}
            assert sorted(found.pending_writes or []) == [("task", "a", n), ("task", "b", n)]
            assert found.parent_config is not None
            assert found.parent_config["configurable"]["thread_id"] == thread_id
            listed = await api.list(thread_config(thread_id))
            assert [t.config["configurable"]["thread_id"] for t in listed] == [thread_id] * 2
        everything = await api.list(None)
        assert sorted(t.config["configurable"]["thread_id"] for t in everything) == sorted(ids * 2)
        await api.delete_thread(ids[0])
        assert await api.get_tuple(thread_config(ids[0])) is None
        assert await api.get_tuple(thread_config(ids[1])) is not None
        again = await api.chain(ids[0], [{"m": ["new"]}])
        found = await api.get_tuple(again[0][0])
        assert found is not None and found.checkpoint["channel_values"] == {"m": ["new"]}
        assert await api.get_tuple(thread_config("never-seen-thread-with-a-long-id")) is None

    # --- pending writes -----------------------------------------------------------------
    async def test_pending_writes_are_returned(self, api: SaverAPI) -> None:
        """get_tuple and list return (task_id, channel, value) for the checkpoint's writes."""
        (config, _), *_ = await api.chain("t", [{"a": 1}])
        await api.put_writes(config, [("a", 5), ("b", {"x": [1]})], "task1", "path1")
        await api.put_writes(config, [("c", None)], "task2")
        found = await api.get_tuple(thread_config("t"))
        assert found is not None
        assert sorted(found.pending_writes or []) == sorted(
            [("task1", "a", 5), ("task1", "b", {"x": [1]}), ("task2", "c", None)]
        )
        listed = await api.list(thread_config("t"))
        assert sorted(listed[0].pending_writes or []) == sorted(found.pending_writes or [])

    async def test_pending_writes_belong_to_one_checkpoint(self, api: SaverAPI) -> None:
        """Writes stored against one checkpoint do not show up on another."""
        saved = await api.chain("t", [{"a": 1}, {"a": 2}])
        await api.put_writes(saved[0][0], [("a", 5)], "task1")
        latest = await api.get_tuple(thread_config("t"))
        assert latest is not None and latest.pending_writes == []
        first = await api.get_tuple(saved[0][0])
        assert first is not None and first.pending_writes == [("task1", "a", 5)]

    async def test_regular_writes_first_write_wins(self, api: SaverAPI) -> None:
        """A regular write already stored for (task_id, idx) is kept."""
        (config, _), *_ = await api.chain("t", [{"a": 1}])
        await api.put_writes(config, [("a", "first"), ("b", "first")], "task1")
        await api.put_writes(config, [("a", "second")], "task1")
        found = await api.get_tuple(config)
        assert found is not None
        assert sorted(found.pending_writes or []) == [
            ("task1", "a", "first"),
            ("task1", "b", "first"),
        ]

    async def test_special_writes_are_overwritten(self, api: SaverAPI) -> None:
        """Writes to __error__/__scheduled__/__interrupt__/__resume__ replace earlier ones."""
        (config, _), *_ = await api.chain("t", [{"a": 1}])
        for channel in (ERROR, SCHEDULED, INTERRUPT, RESUME):
            await api.put_writes(config, [(channel, "old")], "task1")
            await api.put_writes(config, [(channel, "new")], "task1")
        await api.put_writes(config, [("a", "kept"), (ERROR, "newest")], "task1")
        found = await api.get_tuple(config)
        assert found is not None
        assert sorted(found.pending_writes or []) == sorted(
            [("task1", ERROR, "newest"), ("task1", SCHEDULED, "new"), ("task1", INTERRUPT, "new"),
             ("task1", RESUME, "new"), ("task1", "a", "kept")]
        )  # fmt: skip

    async def test_put_writes_needs_checkpoint_id(self, api: SaverAPI) -> None:
        """put_writes without a checkpoint_id raises SaverError SG411."""
        with pytest.raises(SaverError) as info:
            await api.put_writes(thread_config("t"), [("a", 1)], "task1")
        assert info.value.code == "SG411"

    # --- delete -------------------------------------------------------------------------
    async def test_delete_thread(self, api: SaverAPI) -> None:
        """delete_thread removes a thread's checkpoints and writes, and only that thread's."""
        saved = await api.chain("t1", [{"m": [1]}, {"m": [1, 2]}])
        await api.chain("t1", [{"a": 1}], ns="sub")
        await api.put_writes(saved[-1][0], [("a", 1)], "task")
        await api.chain("t2", [{"m": [9]}])
        await api.delete_thread("t1")
        assert await api.get_tuple(thread_config("t1")) is None
        assert await api.list(thread_config("t1")) == []
        assert await api.get_tuple(thread_config("t2")) is not None
        again = await api.chain("t1", [{"m": [1, 2, 3]}])
        found = await api.get_tuple(again[0][0])
        assert found is not None and found.checkpoint["channel_values"] == {"m": [1, 2, 3]}
        assert found.pending_writes == []

    # --- growing lists (delta storage) --------------------------------------------------
    async def test_every_version_of_a_growing_list_reads_back(self, api: SaverAPI) -> None:
        """Appends, replacements, shrinking and forks: each past checkpoint reads back exactly."""
        messages: list[Any] = []
        steps: list[dict[str, Any]] = []
        for turn in range(60):
            if turn == 25:
                messages = [{"summary": turn}]
            elif turn == 40:
                messages = messages[:-3]
            else:
                messages = [*messages, {"role": "user", "n": turn}, {"role": "ai", "n": turn}]
            steps.append({"messages": messages, "turn": turn})
        saved = await api.chain("t", steps)
        fork_base = saved[10]
        fork_msgs = [*steps[10]["messages"], {"fork": True}]
        cp, new = next_checkpoint(api.saver, fork_base[1], {"messages": fork_msgs})
        fork_config = await api.put(fork_base[0], cp, {"source": "fork"}, new)
        for (config, _), expected in zip(saved, steps, strict=True):
            found = await api.get_tuple(config)
            assert found is not None and found.checkpoint["channel_values"] == expected
        forked = await api.get_tuple(fork_config)
        assert forked is not None and forked.checkpoint["channel_values"]["messages"] == fork_msgs
        history = await api.list(thread_config("t"), filter={"source": "loop"})
        assert [t.checkpoint["channel_values"] for t in history] == steps[::-1]

    async def test_copy_putting_stored_versions_again_keeps_history_readable(
        self, api: SaverAPI
    ) -> None:
        """A copy of a past checkpoint (``update_state(..., as_node="__copy__")``) puts its
        channel versions again; every checkpoint, and one that grows the copy, reads back."""
        steps = [{"messages": [1]}, {"messages": [1, 2]}, {"messages": [1, 2, 3]}]
        saved = await api.chain("t", steps)
        (parent_config, _), (_, middle) = saved[0], saved[1]
        copy = copy_checkpoint(middle)
        copy["id"] = str(uuid6(clock_seq=next(_ids)))
        copy_config = await api.put(parent_config, copy, {"source": "fork"}, dict(copy["channel_versions"]))
        cp, new = next_checkpoint(api.saver, copy, {"messages": [1, 2, "x"]})
        grown = await api.put(copy_config, cp, {"source": "update"}, new)
        for (config, _), expected in zip(saved, steps, strict=True):
            found = await api.get_tuple(config)
            assert found is not None and found.checkpoint["channel_values"] == expected
        for config, expected in ((copy_config, [1, 2]), (grown, [1, 2, "x"])):
            found = await api.get_tuple(config)
            assert found is not None and found.checkpoint["channel_values"]["messages"] == expected

    # --- concurrency --------------------------------------------------------------------
    async def test_concurrent_writers(self, api: SaverAPI) -> None:
        """Several writers (threads or tasks) on one saver each keep a complete history."""

        async def writer(n: int) -> None:
            msgs: list[Any] = []
            for i in range(12):
                msgs = [*msgs, {"w": n, "i": i}]
                await api.chain(f"w{n}-{i}", [{"x": i}])
            await api.chain(f"w{n}", [{"m": msgs[: i + 1]} for i in range(12)])

        await asyncio.gather(*(writer(n) for n in range(4)))
        for n in range(4):
            history = await api.list(thread_config(f"w{n}"))
            assert len(history) == 12
            assert [len(t.checkpoint["channel_values"]["m"]) for t in history] == list(
                range(12, 0, -1)
            )
