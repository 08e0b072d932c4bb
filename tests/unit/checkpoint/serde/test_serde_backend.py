"""Backend choice (ormsgpack, else msgpack) and byte-for-byte parity between them."""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass

import pytest

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError, _backend
from stepgraph.checkpoint.serde._backend import get_backend


@dataclass
class Item:
    name: str
    qty: int


def test_default_backend_is_ormsgpack(monkeypatch: pytest.MonkeyPatch) -> None:
    """ormsgpack is used when installed."""
    monkeypatch.delenv("STEPGRAPH_MSGPACK", raising=False)
    assert get_backend().name == "ormsgpack"


def test_environment_variable_selects_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """STEPGRAPH_MSGPACK=msgpack picks the msgpack fallback."""
    pytest.importorskip("msgpack")
    monkeypatch.setenv("STEPGRAPH_MSGPACK", "msgpack")
    assert get_backend().name == "msgpack"


def test_unknown_backend_name_is_sg405() -> None:
    """Asking for an unknown backend raises SG405."""
    with pytest.raises(SerializationError) as info:
        get_backend("protobuf")
    assert info.value.code == "SG405"


def test_falls_back_to_msgpack_without_ormsgpack(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ormsgpack the msgpack package is used."""
    pytest.importorskip("msgpack")
    monkeypatch.setattr(_backend, "_cached", {})
    monkeypatch.setitem(sys.modules, "ormsgpack", None)
    monkeypatch.delenv("STEPGRAPH_MSGPACK", raising=False)
    assert get_backend().name == "msgpack"


def test_no_msgpack_library_is_sg405_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """With neither library installed the error says what to install."""
    monkeypatch.setattr(_backend, "_cached", {})
    monkeypatch.setitem(sys.modules, "ormsgpack", None)
    monkeypatch.setitem(sys.modules, "msgpack", None)
    monkeypatch.delenv("STEPGRAPH_MSGPACK", raising=False)
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer()
    assert info.value.code == "SG405" and "stepgraph[serde]" in (info.value.hint or "")


def test_backends_write_identical_bytes() -> None:
    """Both backends produce the same bytes, so blobs move freely between them."""
    pytest.importorskip("msgpack")
    value = {
        "items": [Item("a", 1), (1, "x")],
        "when": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        "odd_keys": {1: "a", (2, 3): "b", "s": {None: 1}},
        "text": "a\ud800",
        "big": 2**90,
    }
    fast = JsonPlusSerializer(backend="ormsgpack")
    slow = JsonPlusSerializer(backend="msgpack")
    assert fast.dumps_typed(value) == slow.dumps_typed(value)
    assert slow.loads_typed(fast.dumps_typed(value)) == value
    assert fast.loads_typed(slow.dumps_typed(value)) == value
