"""``builder.schemas[schema]`` reads as LangGraph's dict of key -> channel / managed value."""

from __future__ import annotations

import operator
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from stepgraph.channels.binop import BinaryOperatorAggregate
from stepgraph.channels.delta import DeltaChannel
from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.graph import StateGraph
from stepgraph.graph.state_schema import managed_of
from stepgraph.managed import RemainingSteps
from stepgraph.pregel.schemas import schema_json


class S(TypedDict):
    active_agent: str
    log: Annotated[list[str], operator.add]
    remaining_steps: RemainingSteps


MARKER = object()


class J(TypedDict):
    jump_to: NotRequired[Annotated[str | None, EphemeralValue, MARKER]]


class D(TypedDict):
    items: NotRequired[Annotated[list[str], DeltaChannel(operator.add)]]


def test_schema_entry_is_a_key_mapping() -> None:
    channels = StateGraph(S).schemas[S]
    assert "active_agent" in channels and "remaining_steps" in channels and "nope" not in channels
    assert list(channels) == ["active_agent", "log", "remaining_steps"] and len(channels) == 3
    assert isinstance(channels["active_agent"], LastValue)
    assert isinstance(channels["log"], BinaryOperatorAggregate)
    assert channels["remaining_steps"] is managed_of(RemainingSteps)
    assert channels.get("nope", 1) == 1 and [k for k, _ in channels.items()] == list(channels)


def test_a_channel_anywhere_in_the_metadata_is_used() -> None:
    """``Annotated[T, EphemeralValue, marker]`` (langchain's ``jump_to``) is an ephemeral key."""
    assert isinstance(StateGraph(J).schemas[J]["jump_to"], EphemeralValue)


def test_json_schema_of_keys_with_unhashable_metadata() -> None:
    assert schema_json(D)["properties"]["items"]["type"] == "array"
