"""Serializer and cipher protocols, and the error every serde failure raises.

A serializer turns a value into a *typed blob* ``(type_tag, bytes)`` and back. Savers store both
parts and hand them back unchanged, so the tag tells ``loads_typed`` how to read the bytes.

Error codes (``SerializationError.code``):

* ``SG400``: the serializer was configured wrongly (for instance ``pickle_fallback=True``).
* ``SG401``: a blob names a class that is not in the allow-list; nothing was imported or called.
* ``SG402``: a value cannot be serialized (a lambda, an open file, a string with lone surrogates
  inside a too-deep structure, ...).
* ``SG403``: a blob is corrupt, has an unknown type tag, or its class could not be rebuilt
  (typically because the class changed since the value was saved).
* ``SG404``: encryption or decryption failed, or a plaintext blob was refused.
* ``SG405``: no msgpack library is installed.
* ``SG406``: a blob exceeds a decode limit (nesting, number digits, hash collisions, expansion;
  see ``DecodeLimits``); nothing beyond the limit was computed.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from stepgraph.errors import StepgraphError

__all__ = [
    "CipherProtocol",
    "SG_BACKEND_MISSING",
    "SG_CIPHER",
    "SG_CONFIG",
    "SG_CORRUPT",
    "SG_LIMIT",
    "SG_NOT_ALLOWED",
    "SG_UNSERIALIZABLE",
    "SerializationError",
    "SerializerCompat",
    "SerializerProtocol",
    "UntypedSerializerProtocol",
    "maybe_add_typed_methods",
]

SG_CONFIG = "SG400"
SG_NOT_ALLOWED = "SG401"
SG_UNSERIALIZABLE = "SG402"
SG_CORRUPT = "SG403"
SG_CIPHER = "SG404"
SG_BACKEND_MISSING = "SG405"
SG_LIMIT = "SG406"


class SerializationError(StepgraphError, ValueError):
    """A value could not be serialized, or a blob could not (or may not) be deserialized."""

    code = SG_CORRUPT

    def __init__(self, message: str, *, code: str, hint: str | None = None) -> None:
        super().__init__(message, code=code, hint=hint or _DEFAULT_HINTS.get(code))


_DEFAULT_HINTS = {
    SG_CORRUPT: "the stored bytes were changed outside stepgraph or are damaged (nothing in "
    "them was run); restore the row from a backup, or delete the thread",
}


@runtime_checkable
class SerializerProtocol(Protocol):
    """Turns values into typed blobs ``(type_tag, data)`` and back."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj``; the tag says how ``data`` is encoded."""
        ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Rebuild the value from a typed blob made by ``dumps_typed``."""
        ...


@runtime_checkable
class UntypedSerializerProtocol(Protocol):
    """The older serializer shape: plain ``dumps``/``loads`` without a type tag."""

    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


@runtime_checkable
class CipherProtocol(Protocol):
    """Encrypts serialized bytes; used by ``EncryptedSerializer``."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """Return ``(cipher_name, ciphertext)``; the name must not contain ``+``."""
        ...

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Return the plaintext of ``ciphertext`` made by the cipher called ``ciphername``."""
        ...


class SerializerCompat:
    """Gives an untyped serializer (``dumps``/``loads`` only) the typed methods."""

    __slots__ = ("serde",)

    def __init__(self, serde: UntypedSerializerProtocol) -> None:
        self.serde = serde

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return type(obj).__name__, self.serde.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.serde.loads(data[1])


def maybe_add_typed_methods(
    serde: SerializerProtocol | UntypedSerializerProtocol,
) -> SerializerProtocol:
    """Return ``serde`` if it has ``dumps_typed``/``loads_typed``, else wrap it."""
    if hasattr(serde, "dumps_typed") and hasattr(serde, "loads_typed"):
        return serde  # type: ignore[return-value]
    if hasattr(serde, "dumps") and hasattr(serde, "loads"):
        return SerializerCompat(serde)  # type: ignore[arg-type]
    raise SerializationError(
        f"{type(serde).__qualname__} is not a serializer.",
        code=SG_CONFIG,
        hint="pass an object with dumps_typed()/loads_typed(), e.g. JsonPlusSerializer()",
    )
