"""A channel states what it does in a step nobody wrote to it (``idle_kind``); the engine
visits only the channels that can change on their own, chosen by that, not by class name."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import pytest

from stepgraph.channels import (
    AnyValue,
    BaseChannel,
    BinaryOperatorAggregate,
    DeltaChannel,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)
from stepgraph.pregel import NodeBuilder, Pregel


@pytest.mark.parametrize(("channel", "kind"), [
    (LastValue(int), "steady"),
    (BinaryOperatorAggregate(int, operator.add), "steady"),
    (NamedBarrierValue(str, {"a"}), "steady"),
    (UntrackedValue(int), "steady"),
    (DeltaChannel(operator.add), "steady"),
    (Topic(int, accumulate=True), "steady"),
    (Topic(int), "volatile"),
    (EphemeralValue(int), "volatile"),
    (AnyValue(int), "volatile"),
    (LastValueAfterFinish(int), "finish"),
    (NamedBarrierValueAfterFinish(str, {"a"}), "finish"),
])
def test_built_in_channels_state_their_idle_kind(channel: BaseChannel, kind: str) -> None:
    assert channel.idle_kind() == kind


class Renamed(LastValue):  # same behaviour, no promise restated
    pass


class Clearing(LastValue):
    """Clears itself on every step nobody wrote it (a user channel)."""

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            had = self.is_available()
            self.value = type(self)(self.typ).value
            return had
        return super().update(values)


class Declared(LastValue):
    def idle_kind(self) -> Any:
        return "steady"


def test_a_subclass_that_does_not_state_its_idle_kind_is_unknown() -> None:
    assert Renamed(int).idle_kind() == "unknown"
    assert Clearing(int).idle_kind() == "unknown"
    assert Declared(int).idle_kind() == "steady"


def test_pregel_visits_volatile_and_unknown_channels_only() -> None:
    node = NodeBuilder().subscribe_only("a").write_to("b")
    graph = Pregel(
        nodes={"n": node},
        channels={"a": LastValue(int), "b": Clearing(int), "e": EphemeralValue(int),
                  "f": LastValueAfterFinish(int), "t": Topic(int, accumulate=True)},
        input_channels="a", output_channels=["a", "b"],
    )
    volatile, finishable = graph.channel_kinds()
    assert set(volatile) >= {"b", "e"} and not {"a", "f", "t"} & set(volatile)
    assert set(finishable) >= {"b", "f"} and not {"a", "e", "t"} & set(finishable)


def test_a_user_channel_that_clears_itself_is_cleared_on_idle_steps() -> None:
    """``Clearing`` (a LastValue subclass under another name) empties on a step that did not
    write it: the engine calls its ``update([])``, as LangGraph does for every channel."""
    first = NodeBuilder().subscribe_only("a").write_to("b", "c")
    second = NodeBuilder().subscribe_to("c").read_from("b").do(lambda s: s.get("b")).write_to("out")
    graph = Pregel(
        nodes={"first": first, "second": second},
        channels={"a": LastValue(int), "b": Clearing(int), "c": LastValue(int),
                  "out": LastValue(Any)},
        input_channels="a", output_channels=["b", "out"],
    )
    result = graph.invoke(1)
    assert result == {"out": 1}  # second saw b; the step after, nobody wrote it: cleared
