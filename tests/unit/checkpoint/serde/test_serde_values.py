"""JsonPlusSerializer round-trips every supported value type exactly (type and value)."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import enum
import fractions
import ipaddress
import pathlib
import re
import uuid
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from stepgraph.types import Command, Interrupt, Overwrite, Send

RoundTrip = Callable[[Any], Any]


class Color(enum.Enum):
    RED = "red"
    PAIR = (1, 2)


class Level(enum.IntEnum):
    LOW = 1


class Mode(enum.StrEnum):
    FAST = "fast"


class Perm(enum.Flag):
    R = 1
    W = 2


@dataclass
class Point:
    x: int
    y: Any = None


@dataclass(frozen=True, slots=True)
class Key:
    name: str


@dataclass
class WithComputed:
    a: int
    total: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.total = self.a * 10


class Pair(NamedTuple):
    left: Any
    right: Any = None


class User(BaseModel):
    name: str
    tags: list[str] = []
    extra: Any = None


class Aliased(BaseModel):
    model_config = ConfigDict(extra="allow")
    value: int = Field(alias="Value")


NOW = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
PARIS = zoneinfo.ZoneInfo("Europe/Paris")

VALUES: dict[str, Any] = {
    "none": None,
    "true": True,
    "int": 42,
    "negative_int": -7,
    "u64": 2**64 - 1,
    "big_int": 2**200 + 1,
    "big_negative_int": -(2**100),
    "huge_int": 7**5000,
    "float": 1.25,
    "neg_zero": -0.0,
    "inf": float("inf"),
    "str": "héllo",
    "surrogates": "a\ud800\udfffb",
    "bytes": b"\x00\xff",
    "bytearray": bytearray(b"abc"),
    "list": [1, "a", None],
    "tuple": (1, "a"),
    "empty_tuple": (),
    "nested_tuple": ((1, (2,)), [3, (4,)]),
    "dict": {"a": 1, "b": [1, 2]},
    "int_keys": {1: "a", 2: "b"},
    "mixed_keys": {1: "a", "1": "b", None: "c", 2.5: "d", b"k": "e", False: "f"},
    "tuple_keys": {(1, 2): "a", ("x",): "b"},
    "enum_keys": {Color.RED: 1, Level.LOW: 2},
    "date_keys": {dt.date(2024, 1, 1): "new year"},
    "frozenset_keys": {frozenset({1}): 1},
    "big_int_key": {2**70: "big"},
    "surrogate_key": {"k\udc80": 1},
    "set": {1, 2, 3},
    "frozenset": frozenset({"a", "b"}),
    "empty_set": set(),
    "deque": collections.deque([1, 2]),
    "deque_maxlen": collections.deque([1, 2], maxlen=5),
    "ordered_dict": collections.OrderedDict([("b", 1), ("a", 2)]),
    "counter": collections.Counter("abracadabra"),
    "complex": complex(1.5, -2),
    "datetime_naive": NOW,
    "datetime_utc": NOW.replace(tzinfo=dt.UTC),
    "datetime_offset": NOW.replace(tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30))),
    "datetime_named_tz": NOW.replace(tzinfo=dt.timezone(dt.timedelta(hours=1), "CET")),
    "datetime_zoneinfo": NOW.replace(tzinfo=PARIS),
    "datetime_fold": dt.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=PARIS),
    "date": dt.date(1999, 12, 31),
    "time": dt.time(23, 59, 59, 999999),
    "time_tz": dt.time(1, 2, tzinfo=dt.timezone(dt.timedelta(hours=3))),
    "timedelta": dt.timedelta(days=-3, seconds=7, microseconds=11),
    "timezone": dt.timezone(dt.timedelta(hours=2)),
    "zoneinfo": PARIS,
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "decimal": decimal.Decimal("3.1400"),
    "decimal_inf": decimal.Decimal("-Infinity"),
    "fraction": fractions.Fraction(3, 7),
    "enum": Color.RED,
    "enum_tuple_value": Color.PAIR,
    "int_enum": Level.LOW,
    "str_enum": Mode.FAST,
    "flag": Perm.R | Perm.W,
    "path": pathlib.Path("/tmp/a/b.txt"),
    "relative_path": pathlib.Path("a/b"),
    "pure_path": pathlib.PurePosixPath("x/y"),
    "pure_windows_path": pathlib.PureWindowsPath(r"C:\a\b"),
    "regex": re.compile(r"a+b?", re.IGNORECASE | re.MULTILINE),
    "bytes_regex": re.compile(rb"\d+"),
    "ipv4": ipaddress.IPv4Address("10.0.0.1"),
    "ipv6_network": ipaddress.IPv6Network("2001:db8::/32"),
    "dataclass": Point(1, [Point(2)]),
    "frozen_slots_dataclass": Key("k"),
    "dataclass_init_false_field": WithComputed(3),
    "namedtuple": Pair(1, (2, 3)),
    "pydantic": User(name="ada", tags=["x"], extra=(1, {2})),
    "pydantic_alias_extra": Aliased(Value=3, other="x"),
    "pydantic_root": RootModel[list[int]]([1, 2]),
    "send": Send("node", {"x": (1,)}),
    "send_timeout": Send("node", 1, timeout=2.5),
    "interrupt": Interrupt(value={"q": "?"}, id="abc"),
    "overwrite": Overwrite([1, 2]),
    "command": Command(update={"a": 1}, goto=[Send("n", 2), "other"], resume={"i": 1}),
    "nested_mix": {
        "messages": [{"role": "user", "content": "hi", "at": NOW}],
        "seen": {("a", 1), ("b", 2)},
        "points": (Point(1), Point(2, Key("z"))),
        3: [Pair(Color.RED, dt.timedelta(1))],
    },
}


def assert_same(a: Any, b: Any) -> None:
    """Equal values of identical types, recursively (dict keys included)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert len(a) == len(b)
        b_keys = {k: k for k in b}
        for key, value in a.items():
            assert_same(key, b_keys[key])
            assert_same(value, b[key])
    elif isinstance(a, (list, tuple, collections.deque)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b
        if isinstance(a, (dt.datetime, dt.time)):
            assert (a.fold, a.tzinfo, a.utcoffset()) == (b.fold, b.tzinfo, b.utcoffset())
        if isinstance(a, float):
            assert str(a) == str(b)


@pytest.mark.parametrize("name", list(VALUES))
def test_value_round_trips_exactly(name: str, roundtrip: RoundTrip) -> None:
    """Each supported value comes back equal and of the same type."""
    value = VALUES[name]
    assert_same(value, roundtrip(value))


def test_nan_round_trips(roundtrip: RoundTrip) -> None:
    """A NaN float stays NaN."""
    result = roundtrip([float("nan")])
    assert result[0] != result[0]


def test_dataclass_init_false_field_keeps_its_stored_value(roundtrip: RoundTrip) -> None:
    """A field with init=False keeps the value it had, not the recomputed one."""
    value = WithComputed(3)
    value.total = -1
    assert roundtrip(value).total == -1


def test_pydantic_fields_set_is_preserved(roundtrip: RoundTrip) -> None:
    """model_fields_set survives, so exclude_unset dumps stay the same."""
    user = User(name="ada")
    result = roundtrip(user)
    assert result.model_fields_set == {"name"}
    assert result.model_dump(exclude_unset=True) == {"name": "ada"}


def test_pydantic_extra_fields_survive(roundtrip: RoundTrip) -> None:
    """Extra fields of an extra='allow' model come back as extras."""
    result = roundtrip(Aliased(Value=1, other=[1, (2,)]))
    assert result.model_extra == {"other": [1, (2,)]}


def test_deque_keeps_maxlen(roundtrip: RoundTrip) -> None:
    """A bounded deque keeps its maxlen."""
    assert roundtrip(collections.deque([1], maxlen=3)).maxlen == 3


def test_nested_bytearray_comes_back_as_bytes(roundtrip: RoundTrip) -> None:
    """Documented loss: a bytearray inside a container is stored as msgpack bin."""
    assert roundtrip([bytearray(b"x")]) == [b"x"]
    assert type(roundtrip([bytearray(b"x")])[0]) is bytes


def test_unknown_builtin_subclasses_come_back_as_base_type(roundtrip: RoundTrip) -> None:
    """Documented loss: unregistered subclasses of str/int/dict/list become the base type."""

    class Tag(str):
        pass

    class Count(int):
        pass

    class Bag(dict):
        pass

    class Items(list):
        pass

    result = roundtrip([Tag("t"), Count(3), Bag({(1,): 2}), Items([1])])
    assert result == ["t", 3, {(1,): 2}, [1]]
    assert [type(x) for x in result] == [str, int, dict, list]


def test_defaultdict_comes_back_as_dict(roundtrip: RoundTrip) -> None:
    """Documented loss: a defaultdict's factory is not stored."""
    value = collections.defaultdict(list, {"a": [1]})
    result = roundtrip(value)
    assert result == {"a": [1]} and type(result) is dict


def test_datetime_with_foreign_tzinfo_keeps_its_offset(roundtrip: RoundTrip) -> None:
    """Documented loss: an unknown tzinfo class becomes a fixed-offset timezone."""

    class Plus2(dt.tzinfo):
        def utcoffset(self, d: Any) -> dt.timedelta:
            return dt.timedelta(hours=2)

        def dst(self, d: Any) -> dt.timedelta:
            return dt.timedelta(0)

    value = dt.datetime(2024, 1, 1, 12, tzinfo=Plus2())
    result = roundtrip(value)
    assert result == value and result.utcoffset() == dt.timedelta(hours=2)
    assert type(result.tzinfo) is dt.timezone


@dataclass(init=False)
class HandInit:
    a: int
    b: str

    def __init__(self, packed: str) -> None:
        a, b = packed.split(":")
        self.a, self.b = int(a), b


def test_dataclass_with_own_init_is_restored_field_by_field(roundtrip: RoundTrip) -> None:
    """A dataclass with a hand-written __init__ gets its fields back without calling it."""
    result = roundtrip(HandInit("1:x"))
    assert type(result) is HandInit and (result.a, result.b) == (1, "x")
