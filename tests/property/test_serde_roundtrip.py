"""Property: any nested value of supported types survives dumps_typed/loads_typed exactly."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import fractions
import pathlib
import re
import zoneinfo
from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stepgraph.checkpoint.serde import JsonPlusSerializer
from stepgraph.types import Command, Interrupt, Overwrite, Send


class Color(enum.Enum):
    RED = "red"
    GREEN = 2
    BLUE = (3, "b")


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Box:
    content: Any
    label: str = ""


@dataclass(frozen=True)
class Tag:
    name: str
    weight: int = 0


class Pair(NamedTuple):
    left: Any
    right: Any


class Model(BaseModel):
    name: str
    payload: Any = None


PATTERNS = [re.compile("a+"), re.compile(r"(\d+)-(\w*)", re.I | re.M), re.compile(rb"\x00+")]


def _zones() -> st.SearchStrategy[dt.tzinfo]:
    fixed = st.builds(
        dt.timezone,
        st.timedeltas(min_value=dt.timedelta(hours=-23), max_value=dt.timedelta(hours=23)),
    )
    named = st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata"])
    if not zoneinfo.available_timezones():  # no tz database on this machine
        return fixed | st.just(dt.UTC)
    return fixed | st.just(dt.UTC) | named.map(zoneinfo.ZoneInfo)


text = st.text(max_size=8) | st.integers(0xD800, 0xDFFF).map(lambda c: "x" + chr(c))

hashable_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=False),
    text,
    st.binary(max_size=8),
    st.datetimes(timezones=st.none() | _zones()),
    st.dates(),
    st.times(timezones=st.none() | _zones().filter(lambda z: type(z) is dt.timezone)),
    st.timedeltas(),
    st.uuids(),
    st.decimals(allow_nan=False),
    st.fractions().map(fractions.Fraction),
    st.complex_numbers(allow_nan=False),
    st.sampled_from(Color),
    st.sampled_from(Level),
    st.lists(st.text("ab/", min_size=1, max_size=3), max_size=3).map(
        lambda parts: pathlib.PurePosixPath(*parts)
    ),
    st.text("xyz", min_size=1, max_size=4).map(pathlib.Path),
    st.sampled_from(PATTERNS),
    st.builds(Tag, text, st.integers()),
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    small = {"max_size": 4}
    return st.one_of(
        st.lists(children, **small),
        st.lists(children, **small).map(tuple),
        st.dictionaries(text, children, **small),
        st.dictionaries(hashable_leaves, children, **small),
        st.frozensets(hashable_leaves, **small),
        st.sets(hashable_leaves, **small),
        st.lists(children, **small).map(collections.deque),
        st.builds(Box, children, text),
        st.builds(Pair, children, children),
        st.builds(Model, name=text, payload=children),
        st.builds(Send, text, children),
        st.builds(Interrupt, children, text),
        st.builds(Overwrite, children),
        st.builds(Command, update=children, goto=st.lists(text, max_size=2).map(tuple)),
    )


values = st.recursive(hashable_leaves, _containers, max_leaves=20)


def assert_same(a: Any, b: Any) -> None:
    """Equal values of identical types, recursively (keys and set members included)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert len(a) == len(b)
        b_keys = {k: k for k in b}
        for key, value in a.items():
            assert_same(key, b_keys[key])
            assert_same(value, b[key])
    elif isinstance(a, (set, frozenset)):
        assert a == b
        b_members = {m: m for m in b}
        for member in a:
            assert_same(member, b_members[member])
    elif isinstance(a, (list, tuple, collections.deque)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, (Box, Send, Interrupt, Overwrite, Command, Model)):
        if isinstance(a, Send):
            fields = list(a.__slots__)
        elif isinstance(a, Model):
            fields = list(vars(a))
        else:
            fields = [f.name for f in dataclasses.fields(a)]
        for name in fields:
            assert_same(getattr(a, name), getattr(b, name))
    else:
        assert a == b
        if isinstance(a, (dt.datetime, dt.time)):
            assert (a.fold, a.tzinfo, a.utcoffset()) == (b.fold, b.tzinfo, b.utcoffset())
        if isinstance(a, float):
            assert repr(a) == repr(b)


def _serializers() -> list[Any]:
    names: list[Any] = ["ormsgpack"]
    try:
        import msgpack  # noqa: F401

        names.append("msgpack")
    except ImportError:
        names.append(pytest.param("msgpack", marks=pytest.mark.skip(reason="msgpack missing")))
    return names


@pytest.mark.parametrize("backend", _serializers())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_round_trip_is_exact(backend: str, value: Any) -> None:
    """dumps_typed then loads_typed returns an equal value of the same types throughout."""
    serde = JsonPlusSerializer(backend=backend)
    typed = serde.dumps_typed(value)
    assert_same(value, serde.loads_typed(typed))
    assert serde.dumps_typed(value) == typed, "encoding must be deterministic in-process"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_registered_reader_loads_what_writer_wrote(value: Any) -> None:
    """A separate instance with the test classes registered reads the writer's blobs."""
    typed = JsonPlusSerializer().dumps_typed(value)
    reader = JsonPlusSerializer(allowed_types=[Box, Tag, Pair, Model, Color, Level])
    assert_same(value, reader.loads_typed(typed))
