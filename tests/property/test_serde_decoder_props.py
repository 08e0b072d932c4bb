"""Properties of the safe decoder: allowed values round-trip in a serializer that never saw
them, damaged blobs only ever raise ``SerializationError``, and the number limits are exact."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import ipaddress
import json
import pathlib
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError
from stepgraph.checkpoint.serde._limits import DecodeLimits
from stepgraph.types import Command, Interrupt, Overwrite, Send

BACKENDS = ["ormsgpack", "msgpack"]
SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**3000), 2**3000),
    st.floats(allow_nan=False), st.text(max_size=10), st.binary(max_size=10),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)), st.dates(), st.times(),
    st.timedeltas(), st.uuids(), st.decimals(allow_nan=False, places=None),
    st.fractions(), st.complex_numbers(allow_nan=False),
    st.ip_addresses().map(lambda a: a), st.builds(ipaddress.ip_network, st.sampled_from(
        ["10.0.0.0/8", "::/0", "192.168.1.0/24"])),
    st.lists(st.text("abc", min_size=1, max_size=3), max_size=3).map(
        lambda parts: pathlib.PurePosixPath(*parts)),
)  # fmt: skip
hashable = st.one_of(st.integers(), st.text(max_size=6), st.uuids(), st.decimals(
    allow_nan=False), st.tuples(st.integers(), st.text(max_size=3)), st.dates())


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    small = {"max_size": 4}
    return st.one_of(
        st.lists(children, **small), st.lists(children, **small).map(tuple),
        st.dictionaries(st.text(max_size=6), children, **small),
        st.dictionaries(hashable, children, **small),
        st.sets(hashable, **small), st.frozensets(hashable, **small),
        st.lists(children, **small).map(collections.deque),
        st.lists(st.tuples(st.text(max_size=4), children), **small).map(collections.OrderedDict),
        st.builds(Send, st.text(max_size=5), children), st.builds(Overwrite, children),
        st.builds(Interrupt, children, st.text(max_size=5)),
        st.builds(Command, update=children),
    )  # fmt: skip


values = st.recursive(leaves, _containers, max_leaves=15)


def _messages() -> st.SearchStrategy[Any]:
    try:
        from langchain_core import messages as m
    except ImportError:
        return st.nothing()
    text = st.text(max_size=20)
    return st.one_of(
        st.builds(m.HumanMessage, content=text, id=st.none() | text),
        st.builds(m.AIMessage, content=text, id=st.none() | text),
        st.builds(m.SystemMessage, content=text),
        st.builds(m.ToolMessage, content=text, tool_call_id=text),
    )


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(value=values | st.lists(_messages(), max_size=4))
def test_allowed_values_load_in_a_fresh_strict_serializer(backend: str, value: Any) -> None:
    """Built-in types need no registration: a reader that never wrote loads them exactly."""
    typed = JsonPlusSerializer(backend=backend).dumps_typed(value)
    reader = JsonPlusSerializer(backend=backend, auto_register=False)
    result = reader.loads_typed(typed)
    assert result == value and type(result) is type(value)
    assert reader.loads_typed(typed) == result  # decoding is repeatable


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(value=values, data=st.data())
def test_damaged_blobs_raise_only_serialization_errors(backend: str, value: Any,
                                                        data: st.DataObject) -> None:
    """Any byte flipped, dropped or inserted gives a value or a coded error, nothing else."""
    serde = JsonPlusSerializer(backend=backend)
    typ, blob = serde.dumps_typed(value)
    if typ != "msgpack" or not blob:
        return
    pos = data.draw(st.integers(0, len(blob) - 1))
    kind = data.draw(st.sampled_from(["flip", "drop", "insert", "truncate"]))
    byte = bytes([data.draw(st.integers(0, 255))])
    damaged = {"flip": blob[:pos] + byte + blob[pos + 1:], "drop": blob[:pos] + blob[pos + 1:],
               "insert": blob[:pos] + byte + blob[pos:], "truncate": blob[:pos]}[kind]
    try:
        serde.loads_typed(("msgpack", damaged))
    except SerializationError as exc:
        assert exc.code in {"SG401", "SG403", "SG406"}, exc


@SETTINGS
@given(bits=st.integers(60, 1200))
def test_the_int_limit_is_exact(bits: int) -> None:
    limits = DecodeLimits(max_int_bits=1000)
    value = (1 << bits) - 1
    typed = JsonPlusSerializer().dumps_typed(value)
    reader = JsonPlusSerializer(limits=limits)
    if bits <= 1000:
        assert reader.loads_typed(typed) == value
    else:
        with pytest.raises(SerializationError) as info:
            reader.loads_typed(typed)
        assert info.value.code == "SG406"


@SETTINGS
@given(digits=st.integers(1, 200), exponent=st.integers(-2000, 2000))
def test_the_decimal_limits_are_exact(digits: int, exponent: int) -> None:
    limits = DecodeLimits(max_number_digits=100, max_decimal_exponent=1000)
    value = decimal.Decimal(f"{'7' * digits}E{exponent}")
    typed = JsonPlusSerializer().dumps_typed(value)
    reader = JsonPlusSerializer(limits=limits)
    text = str(value)
    written_exponent = int(text.split("E")[1]) if "E" in text else 0
    if digits <= 100 and abs(written_exponent) <= 1000:
        assert reader.loads_typed(typed) == value
    else:
        with pytest.raises(SerializationError) as info:
            reader.loads_typed(typed)
        assert info.value.code == "SG406"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False,
                                                                         allow_infinity=False)
    | st.text(max_size=10),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(value=json_values)
def test_plain_legacy_json_loads_as_json(value: Any) -> None:
    """A legacy "json" blob without constructors is plain JSON."""
    assert JsonPlusSerializer().loads_typed(("json", json.dumps(value).encode())) == value


def test_uuid_and_paths_round_trip_under_their_own_names() -> None:
    serde = JsonPlusSerializer(auto_register=False)
    for value in (uuid.uuid4(), pathlib.PurePosixPath("/a/b"), pathlib.Path("x")):
        assert serde.loads_typed(JsonPlusSerializer().dumps_typed(value)) == value
