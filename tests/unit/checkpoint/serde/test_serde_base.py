"""Protocols, error codes and the untyped-serializer adapter."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stepgraph.checkpoint.serde import (
    CipherProtocol,
    EncryptedSerializer,
    JsonPlusSerializer,
    SerializationError,
    SerializerCompat,
    SerializerProtocol,
    maybe_add_typed_methods,
)
from stepgraph.checkpoint.serde.base import (
    SG_BACKEND_MISSING,
    SG_CIPHER,
    SG_CONFIG,
    SG_CORRUPT,
    SG_NOT_ALLOWED,
    SG_UNSERIALIZABLE,
)
from stepgraph.errors import StepgraphError


class JsonOnly:
    """An old-style serializer with dumps/loads only."""

    def dumps(self, obj: Any) -> bytes:
        return json.dumps(obj).encode()

    def loads(self, data: bytes) -> Any:
        return json.loads(data)


def test_error_codes_are_distinct_sg4xx() -> None:
    """Every serde error code is a distinct SG4xx code."""
    codes = [SG_CONFIG, SG_NOT_ALLOWED, SG_UNSERIALIZABLE, SG_CORRUPT, SG_CIPHER]
    codes.append(SG_BACKEND_MISSING)
    assert len(set(codes)) == len(codes)
    assert all(code.startswith("SG4") for code in codes)


def test_serialization_error_is_a_coded_stepgraph_value_error() -> None:
    """SerializationError carries its code, hint and the formatted message."""
    err = SerializationError("bad blob", code=SG_CORRUPT, hint="fix it")
    assert isinstance(err, StepgraphError) and isinstance(err, ValueError)
    assert err.code == "SG403" and err.hint == "fix it"
    assert str(err) == "[SG403] bad blob\nHint: fix it"


def test_jsonplus_and_encrypted_satisfy_serializer_protocol() -> None:
    """Both serializers are runtime instances of SerializerProtocol."""

    class Toy:
        def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
            return "toy", plaintext

        def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
            return ciphertext

    assert isinstance(JsonPlusSerializer(), SerializerProtocol)
    assert isinstance(Toy(), CipherProtocol)
    assert isinstance(EncryptedSerializer(Toy()), SerializerProtocol)


def test_maybe_add_typed_methods_keeps_typed_serializers() -> None:
    """A serializer that already has typed methods is returned unchanged."""
    serde = JsonPlusSerializer()
    assert maybe_add_typed_methods(serde) is serde


def test_maybe_add_typed_methods_wraps_untyped_serializers() -> None:
    """An untyped serializer gets typed methods that round-trip through dumps/loads."""
    wrapped = maybe_add_typed_methods(JsonOnly())
    assert isinstance(wrapped, SerializerCompat)
    typed = wrapped.dumps_typed({"a": [1, 2]})
    assert typed == ("dict", b'{"a": [1, 2]}')
    assert wrapped.loads_typed(typed) == {"a": [1, 2]}


def test_maybe_add_typed_methods_rejects_non_serializers() -> None:
    """Something with neither API is refused with SG400."""
    with pytest.raises(SerializationError) as info:
        maybe_add_typed_methods(object())  # type: ignore[arg-type]
    assert info.value.code == SG_CONFIG
