"""Joining msgpack-encoded lists so a delta chain decodes in one call."""

from __future__ import annotations

import json
from typing import Any

import ormsgpack
import pytest

from stepgraph.checkpoint._concat import encodes_plain_arrays, join_arrays
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


@pytest.mark.parametrize("sizes", [[0, 0], [3, 12], [15, 1], [20, 70000], [1, 2, 3, 65530]])
def test_joined_arrays_decode_to_the_concatenation(sizes: list[int]) -> None:
    """Bodies of fix/16/32-bit arrays join under a header sized for the total."""
    parts = [list(range(start, start + n)) for start, n in enumerate(sizes)]
    joined = join_arrays([ormsgpack.packb(p) for p in parts])
    assert joined is not None
    assert ormsgpack.unpackb(joined) == [x for p in parts for x in p]


def test_non_arrays_are_refused() -> None:
    """A part that is not a msgpack array (or is empty) makes join_arrays return None."""
    assert join_arrays([ormsgpack.packb([1]), ormsgpack.packb({"a": 1})]) is None
    assert join_arrays([b""]) is None


class Json:
    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return "json", json.dumps(obj).encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return json.loads(data[1])


class Broken:
    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        raise TypeError("no")


def test_only_plain_msgpack_serializers_qualify() -> None:
    """The default serializer qualifies; JSON or failing serializers do not."""
    assert encodes_plain_arrays(JsonPlusSerializer())
    assert not encodes_plain_arrays(Json())
    assert not encodes_plain_arrays(Broken())
