"""Property: splitting a list element by element (``_pieces.split_items``) stores exactly what
the byte walker (``_pieces.split``) would: joined back, it is the serializer's own encoding of
the list, and it decodes to the same value. Lists of repeated references pack each object once.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.property.test_serde_roundtrip import _serializers, assert_same, values

from stepgraph.checkpoint import _pieces
from stepgraph.checkpoint.serde import JsonPlusSerializer

big_text = st.text(min_size=60, max_size=120)
elements = st.one_of(values, big_text, st.dictionaries(st.text(max_size=4), big_text, max_size=3))


def _pack_of(serde: JsonPlusSerializer) -> Any:
    return serde._codec.dumps


@pytest.mark.parametrize("backend", _serializers())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(elements, max_size=12), repeat=st.integers(1, 4))
def test_split_items_joins_back_to_the_list_encoding(backend: str, items: list[Any], repeat: int) -> None:
    serde = JsonPlusSerializer(backend=backend)
    items = items * repeat  # the same objects referenced again
    typ, whole = serde.dumps_typed(items)
    assert typ == "msgpack"
    split = _pieces.split_items(items, _pack_of(serde))
    assert split is not None
    skeleton, pieces, total = split
    assert total == len(whole)
    assert _pieces.join(skeleton, pieces.get) == whole
    assert_same(items, serde.loads_typed(("msgpack", _pieces.join(skeleton, pieces.get))))
    walked = _pieces.split(whole)
    if walked is None:
        assert skeleton == whole and not pieces
    else:
        assert (skeleton, pieces) == walked


def test_each_distinct_object_is_packed_once() -> None:
    serde = JsonPlusSerializer()
    payload = {"kind": "note", "text": "x" * 80}
    calls: list[Any] = []

    def pack(obj: Any) -> bytes:
        calls.append(obj)
        return serde._codec.dumps(obj)

    items = [payload] * 500 + ["small"] * 100
    skeleton, pieces, _ = _pieces.split_items(items, pack) or (b"", {}, 0)
    assert len(calls) == 2
    assert len(pieces) == 1 and len(skeleton) < 600 * 16


def test_an_element_looking_like_a_reference_is_not_split() -> None:
    """A value that already holds a piece reference is stored whole (never split)."""
    ref = bytes((0xC7, 12, _pieces.REF_CODE)) + b"\x01" * 12
    assert _pieces.split_items(["a" * 100, b"x"], lambda obj: ref if obj == b"x" else b"\xa1a") is None


def test_repeats_beyond_the_allowance_stay_inline() -> None:
    serde = JsonPlusSerializer()
    piece = "p" * 4000
    items = [piece] * (2 + _pieces.REPEAT_ALLOWANCE // 4000)
    skeleton, pieces, total = _pieces.split_items(items, serde._codec.dumps) or (b"", {}, 0)
    assert _pieces.join(skeleton, pieces.get) == serde.dumps_typed(items)[1]
    assert (skeleton, pieces) == _pieces.split(serde.dumps_typed(items)[1])
    assert total == len(serde.dumps_typed(items)[1])
