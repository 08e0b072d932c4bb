"""DecodeLimits: each bound refuses just past itself with SG406 naming it, and can be raised."""

from __future__ import annotations

import decimal
import fractions
import re
from typing import Any

import ormsgpack
import pytest

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError
from stepgraph.checkpoint.serde._limits import DEFAULT_LIMITS, DecodeLimits, limits_of
from stepgraph.checkpoint.serde._scan import ScanError, scan
from stepgraph.checkpoint.serde.encrypted import EncryptedSerializer


def ext(code: int, *payload: Any) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb(list(payload)))


def loads(value: Any, limits: DecodeLimits | None = None, backend: str = "ormsgpack") -> Any:
    data = value if isinstance(value, bytes) else ormsgpack.packb(value)
    return JsonPlusSerializer(limits=limits, backend=backend).loads_typed(("msgpack", data))


def refused_limit(value: Any, limits: DecodeLimits | None = None) -> str:
    with pytest.raises(SerializationError) as info:
        loads(value, limits)
    assert info.value.code == "SG406", str(info.value)
    assert "DecodeLimits(" in (info.value.hint or "")
    return str(info.value)


def nested_tuples(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = ext(0, "builtins", "tuple", [value])
    return value


def test_defaults() -> None:
    d = DEFAULT_LIMITS
    assert (d.max_depth, d.max_object_depth, d.max_number_digits, d.max_int_bits) == (
        4096, 100, 4300, 1 << 16)
    assert (d.max_decimal_exponent, d.max_hash_collisions, d.max_expansion) == (999_999, 64, 64)


def test_limits_validate_their_fields() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        DecodeLimits(max_depth=0)
    with pytest.raises(ValueError, match="max_int_bits"):
        DecodeLimits(max_int_bits="9")  # type: ignore[arg-type]


def test_serializers_expose_their_limits() -> None:
    mine = DecodeLimits(max_depth=100)
    serde = JsonPlusSerializer(limits=mine)
    assert serde.limits is mine and limits_of(serde) is mine
    assert serde.with_msgpack_allowlist([int]).limits is mine
    assert limits_of(EncryptedSerializer(cipher=object(), serde=serde)) is mine  # type: ignore[arg-type]
    assert limits_of(object()) is DEFAULT_LIMITS


def test_object_depth() -> None:
    assert loads(nested_tuples(100)) is not None
    assert "max_object_depth" in refused_limit(nested_tuples(101))
    assert loads(nested_tuples(101), DecodeLimits(max_object_depth=200)) is not None


def test_total_depth_counts_containers_inside_objects() -> None:
    value = b"\x01"
    for _ in range(6):  # six objects each holding 900 nested arrays: 5400 levels
        payload = b"\x93\xa8builtins\xa5tuple" + b"\x91" * 900 + value
        value = b"\xc9" + len(payload).to_bytes(4, "big") + b"\x00" + payload
    assert "max_depth" in refused_limit(value)
    assert loads(value, DecodeLimits(max_depth=8000)) is not None


def test_plain_nesting_beyond_the_library_is_sg406_on_both_backends() -> None:
    for backend in ("ormsgpack", "msgpack"):
        with pytest.raises(SerializationError) as info:
            loads(b"\x91" * 5000 + b"\x01", backend=backend)
        assert info.value.code == "SG406"


@pytest.mark.parametrize(
    ("ok", "bad", "limit"),
    [
        (ext(1, "builtins", "int", ["f" * 16_384, 16]), ext(1, "builtins", "int", ["f" * 16_500, 16]),
         "max_int_bits"),
        (ext(1, "builtins", "int", ["9" * 4300, 10]), ext(1, "builtins", "int", ["9" * 4400, 10]),
         "max_number_digits"),
        (ext(0, "decimal", "Decimal", "9" * 4300), ext(0, "decimal", "Decimal", "9" * 4301),
         "max_number_digits"),
        (ext(0, "decimal", "Decimal", "1e999999"), ext(0, "decimal", "Decimal", "1e1000000"),
         "max_decimal_exponent"),
        (ext(0, "fractions", "Fraction", "1/" + "3" * 4300),
         ext(0, "fractions", "Fraction", "1/" + "3" * 4301), "max_number_digits"),
    ],
    ids=["int-hex", "int-decimal", "decimal-digits", "decimal-exponent", "fraction"],
)
def test_number_limits_are_exact(ok: Any, bad: Any, limit: str) -> None:
    assert loads(ok) is not None
    assert limit in refused_limit(bad)


def test_numbers_within_limits_round_trip_exactly() -> None:
    serde = JsonPlusSerializer()
    for value in (1 << 65_000, -(1 << 200), decimal.Decimal("-1.5E-999999"),
                  decimal.Decimal("NaN"), decimal.Decimal("-Infinity"),
                  fractions.Fraction(10**4000, 3)):
        assert serde.loads_typed(serde.dumps_typed(value)) == value or value != value


def test_fraction_strings_must_be_what_str_fraction_writes() -> None:
    with pytest.raises(SerializationError) as info:
        loads(ext(0, "fractions", "Fraction", "1e10000000"))
    assert info.value.code == "SG403"


def test_hash_collisions() -> None:
    prime = (1 << 61) - 1
    colliding = [ext(1, "builtins", "int", [hex(k * prime + 1), 16]) for k in range(2, 80)]
    assert "max_hash_collisions" in refused_limit(ext(0, "builtins", "frozenset", colliding))
    relaxed = DecodeLimits(max_hash_collisions=1000)
    assert len(loads(ext(0, "builtins", "frozenset", colliding), relaxed)) == 78
    # equal values are not collisions: a set of many copies loads
    same = [ext(0, "builtins", "tuple", [1, 2])] * 5000
    assert loads(ext(0, "builtins", "set", same)) == {(1, 2)}


def test_pattern_characters_per_blob() -> None:
    one = ext(1, "re", "compile", ["a" * 60_000, 0])
    assert loads(one).pattern == "a" * 60_000
    assert "max_pattern_chars" in refused_limit([one, ext(1, "re", "compile", ["b" * 6000, 0])])
    assert len(loads([one, one], DecodeLimits(max_pattern_chars=200_000))) == 2


def test_patterns_are_rebuilt_by_stepgraph_not_by_a_named_function() -> None:
    assert loads(ext(1, "re", "compile", ["x+", re.I])) == re.compile("x+", re.I)
    with pytest.raises(SerializationError) as info:
        loads(ext(1, "re", "compile", [["not", "a", "pattern"], 0]))
    assert info.value.code == "SG403"


def test_json_limits() -> None:
    serde = JsonPlusSerializer()
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(("json", b"[" + b"1" * 5000 + b"]"))
    assert info.value.code == "SG406"
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(("json", b"[" * 50_000 + b"]" * 50_000))
    assert info.value.code == "SG406"
    assert serde.loads_typed(("json", b"[" + b"1" * 4300 + b"]")) == [int("1" * 4300)]


def test_scan_depth_and_array_keys() -> None:
    assert scan(ormsgpack.packb({"a": [1, [2]]}), 100).depth == 3
    found = scan(b"\x82\x92\x01\x92\x02\x03\x01\x90\x02", 100)
    assert found.array_keys == [(1, 6), (7, 8)]
    nested = ormsgpack.packb(nested_tuples(5))
    assert scan(nested, 100).depth == 0
    assert scan(nested, 100, into_objects=True).depth == 15  # object, payload, argument
    assert scan(b"\x91" * 50 + b"\x01", 10).depth == 11  # stops early
    for bad in (b"\x92\x01", b"\xc1", b"\x91\x01\x01", b"\xdd\xff\xff\xff\xff"):
        with pytest.raises(ScanError):
            scan(bad, 100)
