"""Fixtures shared by the serde unit tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from stepgraph.checkpoint.serde import JsonPlusSerializer, types
from stepgraph.checkpoint.serde._backend import MsgpackBackend, get_backend


def _backends() -> list[Any]:
    names = ["ormsgpack"]
    try:
        MsgpackBackend()
        names.append("msgpack")
    except ImportError:
        names.append(pytest.param("msgpack", marks=pytest.mark.skip(reason="msgpack missing")))
    return names


@pytest.fixture(params=_backends())
def backend_name(request: pytest.FixtureRequest) -> str:
    """Each installed msgpack backend in turn."""
    get_backend(request.param)
    return request.param


@pytest.fixture
def serde(backend_name: str) -> JsonPlusSerializer:
    """A fresh serializer on each backend."""
    return JsonPlusSerializer(backend=backend_name)


@pytest.fixture
def roundtrip(serde: JsonPlusSerializer) -> Callable[[Any], Any]:
    """Dump then load a value through the same serializer."""

    def run(value: Any) -> Any:
        return serde.loads_typed(serde.dumps_typed(value))

    return run


@pytest.fixture
def clean_global_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Isolate ``register_type`` calls made by a test."""
    monkeypatch.setattr(types, "_GLOBAL_CLASSES", {})
    monkeypatch.setattr(types, "_GLOBAL_CODECS", {})
