"""``apply_writes``: a plain ``LastValue`` key's one write (stored without calling its
``update``) moves it like any update; two writes still fail; other channels still update."""

from __future__ import annotations

import operator
from typing import Any

import pytest

from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.engine.apply import WriteSource, apply_writes
from stepgraph.errors import InvalidUpdateError


class _Counting(LastValue):
    __slots__ = ()
    calls = 0

    def update(self, values: Any) -> bool:
        type(self).calls += 1
        return super().update(values)


def _apply(channels: dict[str, Any], versions: dict[str, int], writes: list) -> set[str]:
    task = WriteSource("node", writes, triggers=("a",), sort_key="~node")
    return apply_writes(
        channels, versions, {}, [task], lambda v: (v or 0) + 1, {}, (), (), 1
    )


def test_one_write_to_a_plain_key_moves_it_and_its_version() -> None:
    channels: dict[str, Any] = {
        "a": LastValue(int, "a"),
        "b": LastValue(int, "b").from_checkpoint(5),
        "log": BinaryOperatorAggregate(list, operator.add, key="log"),
        "sub": _Counting(int, "sub"),
    }
    versions = {"b": 1}
    updated = _apply(channels, versions, [("a", 1), ("log", [1]), ("sub", 7)])
    assert updated == {"a", "log", "sub"}
    assert versions == {"a": 2, "b": 1, "log": 2, "sub": 2}
    assert channels["a"].get() == 1 and channels["b"].get() == 5
    assert channels["log"].get() == [1] and channels["sub"].get() == 7
    assert _Counting.calls == 1  # a subclass keeps its own update


def test_two_writes_to_a_plain_key_still_fail() -> None:
    channels: dict[str, Any] = {"a": LastValue(int, "a").from_checkpoint(0)}
    with pytest.raises(InvalidUpdateError):
        _apply(channels, {"a": 1}, [("a", 1), ("a", 2)])
    assert channels["a"].get() == 0


def test_an_ephemeral_value_is_written_then_cleared_by_the_next_step() -> None:
    channels: dict[str, Any] = {"a": LastValue(int, "a"), "go": EphemeralValue(Any, key="go")}
    versions: dict[str, int] = {}
    live: set[str] = set()

    def step(writes: list) -> set[str]:
        task = WriteSource("node", writes, triggers=("a",), sort_key="~node")
        return apply_writes(
            channels, versions, {}, [task], lambda v: (v or 0) + 1, {}, ("go",), (), 1,
            live=live,
        )

    assert step([("go", None)]) == {"go"}
    assert channels["go"].is_available() and live == {"go"} and versions == {"go": 1}
    assert step([("a", 1)]) == {"a"}  # nobody wrote it: it clears, with a new version
    assert not channels["go"].is_available() and live == set()
    assert versions == {"go": 2, "a": 2}
    assert step([("a", 2)]) == {"a"}  # already clear: nothing moves
    assert versions == {"go": 2, "a": 3}
    with pytest.raises(InvalidUpdateError):  # two writes break its guard
        step([("go", 1), ("go", 2)])
