"""``EncryptedSerializer``: wraps a serializer and encrypts its bytes with a pluggable cipher.

The type tag becomes ``"<inner tag>+<cipher name>"`` (for example ``"msgpack+aes"``), so
``loads_typed`` knows which cipher to ask. Blobs without ``+`` were stored before encryption
was turned on; they are read as plaintext unless ``allow_plaintext=False``.

Any object with ``encrypt(plaintext) -> (name, ciphertext)`` and ``decrypt(name, ciphertext)
-> plaintext`` is a cipher (``CipherProtocol``). ``from_pycryptodome_aes`` builds AES-EAX with
LangGraph's layout (``nonce(16) + tag(16) + ciphertext``), so its blobs are interchangeable
with LangGraph's; it needs the optional ``pycryptodome`` package.
"""

from __future__ import annotations

import os
from typing import Any

from stepgraph.checkpoint.serde.base import (
    SG_CIPHER,
    CipherProtocol,
    SerializationError,
    SerializerProtocol,
)
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = ["AesEaxCipher", "EncryptedSerializer"]

KEY_ENV_VARS = ("STEPGRAPH_AES_KEY", "LANGGRAPH_AES_KEY")


class EncryptedSerializer:
    """Serialize with ``serde`` (default ``JsonPlusSerializer()``), then encrypt."""

    __slots__ = ("cipher", "serde", "allow_plaintext")

    def __init__(
        self,
        cipher: CipherProtocol,
        serde: SerializerProtocol | None = None,
        *,
        allow_plaintext: bool = True,
    ) -> None:
        if serde is None:
            serde = JsonPlusSerializer()
        self.cipher = cipher
        self.serde = serde
        self.allow_plaintext = allow_plaintext

    @property
    def limits(self) -> Any:
        """The inner serializer's decode limits (``DecodeLimits``), if it declares them."""
        return getattr(self.serde, "limits", None)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` with the inner serializer and encrypt the bytes."""
        type_, data = self.serde.dumps_typed(obj)
        try:
            name, ciphertext = self.cipher.encrypt(data)
        except Exception as exc:
            raise SerializationError(
                f"Encryption failed: {exc!r}", code=SG_CIPHER, hint="check the cipher's key"
            ) from exc
        if not name or "+" in name:
            raise SerializationError(
                f"Cipher name {name!r} must be non-empty and must not contain '+'.",
                code=SG_CIPHER,
            )
        return f"{type_}+{name}", ciphertext

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decrypt (if the tag names a cipher) and deserialize."""
        type_, payload = data
        if "+" not in type_:
            if not self.allow_plaintext:
                raise SerializationError(
                    f"Refusing an unencrypted {type_!r} blob (allow_plaintext=False).",
                    code=SG_CIPHER,
                    hint="re-save the value through the EncryptedSerializer",
                )
            return self.serde.loads_typed(data)
        inner, name = type_.split("+", 1)
        try:
            plaintext = self.cipher.decrypt(name, payload)
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(
                f"Could not decrypt a {type_!r} blob: {exc!r}",
                code=SG_CIPHER,
                hint="the key or cipher differs from the one that wrote the checkpoint",
            ) from exc
        return self.serde.loads_typed((inner, plaintext))

    @classmethod
    def from_pycryptodome_aes(
        cls,
        serde: SerializerProtocol | None = None,
        *,
        key: bytes | str | None = None,
        allow_plaintext: bool = True,
    ) -> EncryptedSerializer:
        """AES-EAX encryption; ``key`` (16, 24 or 32 bytes) defaults to ``$STEPGRAPH_AES_KEY``.

        ``$LANGGRAPH_AES_KEY`` is read too. Requires ``pip install pycryptodome``.
        """
        return cls(AesEaxCipher(key), serde, allow_plaintext=allow_plaintext)


class AesEaxCipher:
    """AES in EAX mode (authenticated) via pycryptodome; cipher name ``"aes"``."""

    __slots__ = ("_key", "_aes")

    name = "aes"

    def __init__(self, key: bytes | str | None = None) -> None:
        try:
            from Crypto.Cipher import AES
        except ImportError as exc:
            raise ImportError(
                "AES encryption needs pycryptodome: pip install pycryptodome "
                "(or pass your own cipher to EncryptedSerializer)"
            ) from exc
        if key is None:
            key = next((os.environ[v] for v in KEY_ENV_VARS if os.environ.get(v)), None)
        if key is None:
            raise SerializationError(
                "No AES key given.",
                code=SG_CIPHER,
                hint="pass key=... or set STEPGRAPH_AES_KEY (16, 24 or 32 bytes)",
            )
        raw = key.encode() if isinstance(key, str) else bytes(key)
        if len(raw) not in (16, 24, 32):
            raise SerializationError(
                f"AES key must be 16, 24 or 32 bytes long, got {len(raw)}.", code=SG_CIPHER
            )
        self._key = raw
        self._aes = AES

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        cipher = self._aes.new(self._key, self._aes.MODE_EAX)
        ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        return self.name, cipher.nonce + tag + ciphertext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != self.name:
            raise SerializationError(
                f"Blob was encrypted with {ciphername!r}, this cipher is {self.name!r}.",
                code=SG_CIPHER,
            )
        nonce, tag, body = ciphertext[:16], ciphertext[16:32], ciphertext[32:]
        cipher = self._aes.new(self._key, self._aes.MODE_EAX, nonce=nonce)
        return cipher.decrypt_and_verify(body, tag)
