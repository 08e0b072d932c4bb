"""``StateViews``: node inputs refreshed by version read what a full read would."""

from __future__ import annotations

from typing import Any

from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.constants import MISSING
from stepgraph.engine.views import StateViews


def _full(channels: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: channels[k].get() for k in keys if channels[k].is_available()}


def test_a_view_follows_versions_and_keeps_the_declared_order() -> None:
    channels: dict[str, Any] = {
        "a": LastValue(int).from_checkpoint(1),
        "b": EphemeralValue(int).from_checkpoint(MISSING),
        "c": LastValue(int).from_checkpoint(3),
    }
    versions: dict[str, Any] = {"a": 1, "c": 1}
    keys = ("a", "b", "c")
    views = StateViews()
    assert views.read(channels, versions, keys) == _full(channels, keys) == {"a": 1, "c": 3}

    channels["b"].update([2])  # b becomes available: it comes before c, as in a full read
    versions["b"] = 2
    got = views.read(channels, versions, keys)
    assert got == {"a": 1, "b": 2, "c": 3} and list(got) == ["a", "b", "c"]

    channels["b"].update([])  # cleared
    channels["a"].update([10])
    versions["a"] = versions["b"] = 3
    assert views.read(channels, versions, keys) == {"a": 10, "c": 3}

    channels["c"].update([30])  # a change without a version move is not seen (by design:
    assert views.read(channels, versions, keys)["c"] == 3  # every update moves its version)


def test_new_channels_drop_every_view() -> None:
    views = StateViews()
    first = {"a": LastValue(int).from_checkpoint(1)}
    assert views.read(first, {"a": 1}, ("a",)) == {"a": 1}
    second = {"a": LastValue(int).from_checkpoint(2)}  # a restore: same versions, new channels
    assert views.read(second, {"a": 1}, ("a",)) == {"a": 2}


def test_a_channel_that_copies_is_read_every_time() -> None:
    from stepgraph.channels.topic import Topic

    topic = Topic(int, accumulate=True).from_checkpoint([1, 2])
    channels = {"t": topic}
    views = StateViews()
    first = views.read(channels, {"t": 1}, ("t",))["t"]
    first.append(99)  # a node changing its input in place
    assert views.read(channels, {"t": 1}, ("t",))["t"] == [1, 2]


def test_a_wide_view_refreshes_only_moved_keys_and_matches_full_reads() -> None:
    import random

    rng = random.Random(3)
    keys = tuple(f"k{i}" for i in range(300))
    channels: dict[str, Any] = {k: LastValue(int).from_checkpoint(i) for i, k in enumerate(keys)}
    channels["k7"] = EphemeralValue(int).from_checkpoint(MISSING)
    versions: dict[str, Any] = {k: 1 for k in keys if k != "k7"}
    views = StateViews()
    version = 1
    for _ in range(60):
        version += 1
        for k in rng.sample(keys, 6):
            ch = channels[k]
            if isinstance(ch, EphemeralValue):
                ch.update([version] if rng.random() < 0.5 else [])
            else:
                ch.update([version])
            versions[k] = version
        got = views.read(channels, versions, keys)
        full = _full(channels, keys)
        assert got == full and list(got) == list(full)
