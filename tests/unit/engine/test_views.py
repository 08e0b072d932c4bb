"""``StateViews``: node inputs refreshed by what ``apply_writes`` reports changed read what a
full read would."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.constants import MISSING
from stepgraph.engine.views import StateViews
from stepgraph.graph import END, START, StateGraph


class _S(TypedDict, total=False):
    a: int
    b: int
    c: Annotated[list, operator.add]
    seen: Annotated[list, operator.add]


def _full(channels: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: channels[k].get() for k in keys if channels[k].is_available()}


def test_a_view_follows_versions_and_keeps_the_declared_order() -> None:
    channels: dict[str, Any] = {
        "a": LastValue(int).from_checkpoint(1),
        "b": EphemeralValue(int).from_checkpoint(MISSING),
        "c": LastValue(int).from_checkpoint(3),
    }
    keys = ("a", "b", "c")
    views = StateViews()
    assert views.read(channels, keys) == _full(channels, keys) == {"a": 1, "c": 3}

    channels["b"].update([2])  # b becomes available: it comes before c, as in a full read
    views.note({"b"})
    got = views.read(channels, keys)
    assert got == {"a": 1, "b": 2, "c": 3} and list(got) == ["a", "b", "c"]

    channels["b"].update([])  # cleared
    channels["a"].update([10])
    views.note({"a", "b", "not read by this view"})
    assert views.read(channels, keys) == {"a": 10, "c": 3}

    channels["c"].update([30])  # a change apply_writes did not report is not seen (by
    assert views.read(channels, keys)["c"] == 3  # design: every update moves its version)


def test_new_channels_drop_every_view() -> None:
    views = StateViews()
    first = {"a": LastValue(int).from_checkpoint(1)}
    assert views.read(first, ("a",)) == {"a": 1}
    second = {"a": LastValue(int).from_checkpoint(2)}  # a restore: new channels
    assert views.read(second, ("a",)) == {"a": 2}


def test_a_channel_that_copies_is_read_every_time() -> None:
    from stepgraph.channels.topic import Topic

    topic = Topic(int, accumulate=True).from_checkpoint([1, 2])
    channels = {"t": topic}
    views = StateViews()
    first = views.read(channels, ("t",))["t"]
    first.append(99)  # a node changing its input in place
    assert views.read(channels, ("t",))["t"] == [1, 2]


def test_a_wide_view_refreshes_only_moved_keys_and_matches_full_reads() -> None:
    import random

    rng = random.Random(3)
    keys = tuple(f"k{i}" for i in range(300))
    channels: dict[str, Any] = {k: LastValue(int).from_checkpoint(i) for i, k in enumerate(keys)}
    channels["k7"] = EphemeralValue(int).from_checkpoint(MISSING)
    views = StateViews()
    for version in range(60):
        moved = set(rng.sample(keys, 6))
        for k in moved:
            ch = channels[k]
            if isinstance(ch, EphemeralValue):
                ch.update([version] if rng.random() < 0.5 else [])
            else:
                ch.update([version])
        views.note(moved)
        got = views.read(channels, keys)
        full = _full(channels, keys)
        assert got == full and list(got) == list(full)


def test_node_inputs_follow_every_step_in_a_run() -> None:
    """Through the engine: each node reads the state as a full read gives it, in both
    drivers, with input, steps and ``update_state`` moving different keys."""
    def one(s: _S) -> dict[str, Any]:
        return {"a": s.get("a", 0) + 1, "seen": [("one", s.get("a"), s.get("b"), len(s["c"]))]}

    def two(s: _S) -> dict[str, Any]:
        return {"b": s["a"] * 10, "c": [s["a"]], "seen": [("two", s["a"], s.get("b"), len(s["c"]))]}

    def route(s: _S) -> str:
        return END if s["a"] >= 4 else "one"

    g = StateGraph(_S)
    g.add_node("one", one)
    g.add_node("two", two)
    g.add_edge(START, "one")
    g.add_edge("one", "two")
    g.add_conditional_edges("two", route)
    app = g.compile(checkpointer=InMemorySaver())
    expected = [("one", None, None, 0), ("two", 1, None, 0), ("one", 1, 10, 1), ("two", 2, 10, 1),
                ("one", 2, 20, 2), ("two", 3, 20, 2), ("one", 3, 30, 3), ("two", 4, 30, 3)]
    cfg = {"configurable": {"thread_id": "s"}}
    assert app.invoke({"c": []}, cfg)["seen"] == expected
    cfg2 = {"configurable": {"thread_id": "a"}}
    assert asyncio.run(app.ainvoke({"c": []}, cfg2))["seen"] == expected
    app.update_state(cfg, {"a": 0, "b": 5}, as_node="two")  # back to "one" with a=0, b=5
    assert app.invoke(None, cfg)["seen"][len(expected)] == ("one", 0, 5, 4)


def test_value_slot_channels_keep_the_contract_the_engine_inlines() -> None:
    from stepgraph.channels.base import BaseChannel
    from stepgraph.engine.views import VALUE_SLOT

    for kind in VALUE_SLOT:
        assert kind.consume is BaseChannel.consume  # consuming never changes them
        ch = next(iter(_samples(kind)))
        for value in (MISSING, 0, None, [1]):
            ch.value = value
            assert ch.is_available() is (value is not MISSING)
            if value is not MISSING:
                assert ch.get() is value


def _samples(kind: type) -> list[Any]:
    if kind is BinaryOperatorAggregate:
        return [BinaryOperatorAggregate(list, operator.add, key="k")]
    return [kind(int, key="k")]
