"""EncryptedSerializer with a toy cipher, and the optional pycryptodome AES cipher."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import pytest

from stepgraph.checkpoint.serde import EncryptedSerializer, JsonPlusSerializer, SerializationError
from stepgraph.types import Send


@dataclass
class Secret:
    code: str


class XorCipher:
    """A toy cipher: XOR with one byte (never use for real data)."""

    def __init__(self, key: int = 0x5A, name: str = "xor") -> None:
        self.key = key
        self.name = name

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return self.name, bytes(b ^ self.key for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != self.name:
            raise ValueError(f"unknown cipher {ciphername}")
        return bytes(b ^ self.key for b in ciphertext)


class BrokenCipher(XorCipher):
    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        raise RuntimeError("hardware security module offline")


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        (None, "null+xor"),
        (b"raw", "bytes+xor"),
        ({"messages": [1, (2, 3)], "send": Send("n", 1)}, "msgpack+xor"),
        (Secret("s3cret"), "msgpack+xor"),
    ],
)
def test_round_trip_through_toy_cipher(value: Any, tag: str) -> None:
    """Values round-trip and the tag names both the inner type and the cipher."""
    serde = EncryptedSerializer(XorCipher())
    typed = serde.dumps_typed(value)
    assert typed[0] == tag
    assert serde.loads_typed(typed) == value


def test_ciphertext_differs_from_plaintext() -> None:
    """The stored bytes are the cipher's output, not the msgpack bytes."""
    inner = JsonPlusSerializer()
    serde = EncryptedSerializer(XorCipher(), inner)
    assert serde.dumps_typed("visible")[1] != inner.dumps_typed("visible")[1]
    assert b"s3cret" not in serde.dumps_typed(Secret("s3cret"))[1]


def test_plaintext_blobs_are_read_by_default() -> None:
    """Blobs saved before encryption was enabled still load."""
    typed = JsonPlusSerializer().dumps_typed({"a": 1})
    assert EncryptedSerializer(XorCipher()).loads_typed(typed) == {"a": 1}


def test_plaintext_blobs_can_be_refused() -> None:
    """allow_plaintext=False refuses unencrypted blobs with SG404."""
    typed = JsonPlusSerializer().dumps_typed({"a": 1})
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer(XorCipher(), allow_plaintext=False).loads_typed(typed)
    assert info.value.code == "SG404"


def test_wrong_cipher_name_is_sg404() -> None:
    """A blob from another cipher fails with SG404, chaining the cipher's error."""
    typed = EncryptedSerializer(XorCipher(name="other")).dumps_typed({"a": 1})
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer(XorCipher()).loads_typed(typed)
    assert info.value.code == "SG404" and isinstance(info.value.__cause__, ValueError)


def test_encrypt_failure_is_sg404() -> None:
    """A cipher that fails to encrypt raises SG404."""
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer(BrokenCipher()).dumps_typed(1)
    assert info.value.code == "SG404"


def test_cipher_name_with_plus_is_refused() -> None:
    """A cipher name containing '+' would make tags ambiguous."""
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer(XorCipher(name="a+b")).dumps_typed(1)
    assert info.value.code == "SG404"


def test_inner_allow_list_still_applies() -> None:
    """Decryption does not bypass the inner serializer's allow-list."""
    typed = EncryptedSerializer(XorCipher()).dumps_typed(Secret("x"))
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer(XorCipher()).loads_typed(typed)
    assert info.value.code == "SG401"


def test_aes_round_trip_with_langgraph_layout() -> None:
    """AES-EAX blobs are nonce(16) + tag(16) + ciphertext under tag 'msgpack+aes'."""
    pytest.importorskip("Crypto.Cipher.AES")
    serde = EncryptedSerializer.from_pycryptodome_aes(key=b"k" * 16)
    tag, data = serde.dumps_typed({"a": [1, 2]})
    inner = JsonPlusSerializer().dumps_typed({"a": [1, 2]})[1]
    assert tag == "msgpack+aes" and len(data) == 32 + len(inner)
    assert serde.loads_typed((tag, data)) == {"a": [1, 2]}


def test_aes_detects_tampering() -> None:
    """Flipping a ciphertext byte fails authentication with SG404."""
    pytest.importorskip("Crypto.Cipher.AES")
    serde = EncryptedSerializer.from_pycryptodome_aes(key="0123456789abcdef")
    tag, data = serde.dumps_typed("hello")
    tampered = data[:-1] + bytes([data[-1] ^ 1])
    with pytest.raises(SerializationError) as info:
        serde.loads_typed((tag, tampered))
    assert info.value.code == "SG404"


def test_aes_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without key=, STEPGRAPH_AES_KEY is used."""
    pytest.importorskip("Crypto.Cipher.AES")
    monkeypatch.setenv("STEPGRAPH_AES_KEY", "x" * 32)
    serde = EncryptedSerializer.from_pycryptodome_aes()
    other = EncryptedSerializer.from_pycryptodome_aes(key="x" * 32)
    assert other.loads_typed(serde.dumps_typed(5)) == 5


@pytest.mark.parametrize("key", [None, b"short"])
def test_aes_bad_or_missing_key_is_sg404(
    monkeypatch: pytest.MonkeyPatch, key: bytes | None
) -> None:
    """A missing key or one of the wrong length raises SG404."""
    pytest.importorskip("Crypto.Cipher.AES")
    monkeypatch.delenv("STEPGRAPH_AES_KEY", raising=False)
    monkeypatch.delenv("LANGGRAPH_AES_KEY", raising=False)
    with pytest.raises(SerializationError) as info:
        EncryptedSerializer.from_pycryptodome_aes(key=key)
    assert info.value.code == "SG404"


def test_aes_without_pycryptodome_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pycryptodome, from_pycryptodome_aes raises an ImportError with the fix."""
    monkeypatch.setitem(sys.modules, "Crypto", None)
    monkeypatch.setitem(sys.modules, "Crypto.Cipher", None)
    with pytest.raises(ImportError, match="pip install pycryptodome"):
        EncryptedSerializer.from_pycryptodome_aes(key=b"k" * 16)
