"""JsonPlusSerializer: type tags, the allow-list on load, exceptions and error codes."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

import ormsgpack
import pytest
from pydantic import BaseModel

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError, SerializedException


@dataclass
class Note:
    text: str


class Doc(BaseModel):
    title: str


class Money:
    """A plain class: serializable only with a registered codec."""

    def __init__(self, cents: int) -> None:
        self.cents = cents

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and other.cents == self.cents


class AppError(Exception):
    pass


def ext(code: int, *payload: Any) -> ormsgpack.Ext:
    """A msgpack extension as LangGraph (or an attacker) would write it."""
    return ormsgpack.Ext(code, ormsgpack.packb(list(payload)))


def blob(value: Any) -> tuple[str, bytes]:
    return "msgpack", ormsgpack.packb(value)


def codes_of(info: pytest.ExceptionInfo[SerializationError]) -> str:
    return info.value.code


@pytest.mark.parametrize(
    ("value", "tag", "data"),
    [(None, "null", b""), (b"ab", "bytes", b"ab"), (bytearray(b"ab"), "bytearray", b"ab")],
)
def test_special_type_tags(serde: JsonPlusSerializer, value: Any, tag: str, data: bytes) -> None:
    """None, bytes and bytearray use their own tags and raw bytes."""
    assert serde.dumps_typed(value) == (tag, data)
    result = serde.loads_typed((tag, data))
    assert result == value and type(result) is type(value)


def test_plain_lists_are_bare_msgpack_arrays(serde: JsonPlusSerializer) -> None:
    """Savers may concatenate list blobs: lists must stay bare msgpack arrays."""
    assert serde.dumps_typed([0, "a", [1]]) == ("msgpack", b"\x93\x00\xa1a\x91\x01")


def test_loads_accepts_memoryview(serde: JsonPlusSerializer) -> None:
    """Blobs read from a database as memoryview load like bytes."""
    tag, data = serde.dumps_typed({"a": (1,)})
    assert serde.loads_typed((tag, memoryview(data))) == {"a": (1,)}
    assert serde.loads_typed(("bytes", memoryview(b"x"))) == b"x"


def test_builtin_exceptions_come_back_as_themselves(serde: JsonPlusSerializer) -> None:
    """ValueError, KeyError, ConnectionError... keep their class and args."""
    for exc in (ValueError("bad", 2), KeyError("k"), ConnectionError("transient")):
        result = serde.loads_typed(serde.dumps_typed(exc))
        assert type(result) is type(exc) and result.args == exc.args


def test_builtin_exception_with_unserializable_args_keeps_their_repr(
    serde: JsonPlusSerializer,
) -> None:
    """Arguments that cannot be stored are replaced by their repr."""
    lock = threading.Lock()
    result = serde.loads_typed(serde.dumps_typed(RuntimeError("held", lock)))
    assert type(result) is RuntimeError and result.args == ("held", repr(lock))


def test_other_exceptions_become_serialized_exception(serde: JsonPlusSerializer) -> None:
    """An unregistered exception class comes back as a string-bearing stand-in."""
    result = serde.loads_typed(serde.dumps_typed(AppError("boom")))
    assert type(result) is SerializedException
    assert str(result) == "AppError('boom')"
    assert result.type_name == f"{__name__}.AppError"
    again = serde.loads_typed(serde.dumps_typed(result))
    assert type(again) is SerializedException and str(again) == "AppError('boom')"


def test_registered_exceptions_keep_their_class(serde: JsonPlusSerializer) -> None:
    """Registering an exception class restores it with its args."""
    serde.register(AppError)
    result = serde.loads_typed(serde.dumps_typed(AppError("boom", 1)))
    assert type(result) is AppError and result.args == ("boom", 1)


def test_registered_exception_that_cannot_be_rebuilt_falls_back() -> None:
    """An exception whose constructor rejects its args becomes a SerializedException."""

    class Strict(Exception):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"{a}-{b}")

    serde = JsonPlusSerializer(allowed_types=[Strict])
    result = serde.loads_typed(serde.dumps_typed(Strict(1, 2)))
    assert type(result) is SerializedException and "Strict" in result.type_name


def test_lambda_cannot_be_serialized(serde: JsonPlusSerializer) -> None:
    """A lambda raises SG402 naming the function type."""
    with pytest.raises(SerializationError) as info:
        serde.dumps_typed({"fn": lambda x: x})
    assert codes_of(info) == "SG402"
    assert "builtins.function" in str(info.value) and "<lambda>" in str(info.value)


def test_unserializable_object_inside_dataclass_is_reported(serde: JsonPlusSerializer) -> None:
    """The SG402 error surfaces from nested extension payloads too."""
    with pytest.raises(SerializationError) as info:
        serde.dumps_typed([Note(text=threading.Lock())])  # type: ignore[arg-type]
    assert codes_of(info) == "SG402" and "lock" in str(info.value)


def test_too_deep_nesting_is_sg402(serde: JsonPlusSerializer) -> None:
    """Values nested past msgpack's depth limit raise SG402, not a crash."""
    value: Any = []
    for _ in range(1000):
        value = [value]
    with pytest.raises(SerializationError) as info:
        serde.dumps_typed(value)
    assert codes_of(info) == "SG402"


def test_auto_registered_classes_load_in_same_instance(serde: JsonPlusSerializer) -> None:
    """Dataclasses and models this instance serialized load back with no config."""
    value = [Note("n"), Doc(title="t")]
    assert serde.loads_typed(serde.dumps_typed(value)) == value


def test_fresh_instance_refuses_unregistered_class(serde: JsonPlusSerializer) -> None:
    """A serializer that never saw a class refuses a blob naming it (SG401)."""
    typed = serde.dumps_typed(Note("n"))
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer().loads_typed(typed)
    assert codes_of(info) == "SG401"
    assert f"{__name__}.Note" in str(info.value)
    assert "serde.register(Note)" in (info.value.hint or "")


def test_auto_register_can_be_disabled() -> None:
    """With auto_register=False even the writing instance refuses its own classes."""
    serde = JsonPlusSerializer(auto_register=False)
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(serde.dumps_typed(Note("n")))
    assert codes_of(info) == "SG401"


@pytest.mark.parametrize(
    "make",
    [
        lambda: JsonPlusSerializer(allowed_types=[Note, Doc]),
        lambda: JsonPlusSerializer(allowed_modules=[__name__]),
        lambda: JsonPlusSerializer(allowed_msgpack_modules=[(__name__, "Note"), (__name__, "Doc")]),
        lambda: JsonPlusSerializer(allowed_msgpack_modules=[Note, Doc]),
        lambda: JsonPlusSerializer(allowed_msgpack_modules=True),
        lambda: JsonPlusSerializer().with_msgpack_allowlist([Note, Doc]),
    ],
)
def test_allow_list_options_let_another_instance_load(make: Any) -> None:
    """Each way of allowing a class lets a fresh instance load it."""
    value = [Note("n"), Doc(title="t")]
    typed = JsonPlusSerializer().dumps_typed(value)
    assert make().loads_typed(typed) == value


def test_register_after_creation() -> None:
    """serde.register allows a class on an existing instance."""
    typed = JsonPlusSerializer().dumps_typed(Note("n"))
    serde = JsonPlusSerializer()
    serde.register(Note)
    assert serde.loads_typed(typed) == Note("n")


def test_with_msgpack_allowlist_leaves_original_unchanged() -> None:
    """with_msgpack_allowlist returns a new serializer."""
    typed = JsonPlusSerializer().dumps_typed(Note("n"))
    base = JsonPlusSerializer()
    base.with_msgpack_allowlist([Note])
    with pytest.raises(SerializationError):
        base.loads_typed(typed)


def test_register_codec_makes_plain_class_serializable() -> None:
    """A plain class becomes serializable with an encoder/decoder pair."""
    writer = JsonPlusSerializer()
    with pytest.raises(SerializationError):
        writer.dumps_typed(Money(5))
    writer.register(Money, encoder=lambda m: m.cents, decoder=lambda c: Money(c))
    typed = writer.dumps_typed({"price": Money(5)})
    reader = JsonPlusSerializer()
    reader.register(Money, encoder=lambda m: m.cents, decoder=lambda c: Money(c))
    assert reader.loads_typed(typed) == {"price": Money(5)}


def test_pickle_fallback_is_refused() -> None:
    """pickle_fallback=True is a configuration error (SG400)."""
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer(pickle_fallback=True)
    assert codes_of(info) == "SG400"


def test_pickle_blobs_are_refused(serde: JsonPlusSerializer) -> None:
    """A 'pickle' typed blob is never unpickled."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(("pickle", b"\x80\x04K\x01."))
    assert codes_of(info) == "SG401"


def test_unknown_type_tag_is_sg403(serde: JsonPlusSerializer) -> None:
    """An unknown type tag is reported, not guessed."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(("yaml", b"a: 1"))
    assert codes_of(info) == "SG403"


def test_corrupt_msgpack_is_sg403(serde: JsonPlusSerializer) -> None:
    """Truncated msgpack data raises SG403."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(("msgpack", b"\x93\x01"))
    assert codes_of(info) == "SG403"


def test_blob_calling_os_system_is_refused(
    serde: JsonPlusSerializer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crafted blob naming os.system raises SG401 and never calls it."""
    calls: list[Any] = []
    monkeypatch.setattr(os, "system", calls.append)
    for code in (0, 1, 2):
        payload = "echo pwned" if code == 0 else ["echo pwned"] if code == 1 else {"c": "x"}
        with pytest.raises(SerializationError) as info:
            serde.loads_typed(blob({"state": ext(code, "os", "system", payload)}))
        assert codes_of(info) == "SG401" and "os.system" in str(info.value)
    assert calls == []


def test_blob_naming_unregistered_test_class_is_refused(serde: JsonPlusSerializer) -> None:
    """A crafted blob naming a class nobody registered raises SG401."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(blob([ext(2, __name__, "Note", {"text": "x"})]))
    assert codes_of(info) == "SG401"


def test_blob_calling_unsafe_method_is_refused(serde: JsonPlusSerializer) -> None:
    """Only whitelisted class methods may be named in a method extension."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(blob(ext(3, "datetime", "datetime", 0, "fromtimestamp")))
    assert codes_of(info) == "SG401"


def test_class_changed_since_save_is_sg403(serde: JsonPlusSerializer) -> None:
    """Stored fields the class no longer accepts give SG403 with a hint."""
    serde.register(Note)
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(blob(ext(2, __name__, "Note", {"text": "x", "gone": 1})))
    assert codes_of(info) == "SG403" and "changed" in (info.value.hint or "")


@pytest.mark.parametrize(("code", "words"), [(6, "numpy"), (42, "extension type 42")])
def test_unsupported_extension_codes_are_sg403(
    serde: JsonPlusSerializer, code: int, words: str
) -> None:
    """Numpy arrays and unknown extension codes are reported clearly."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(blob(ormsgpack.Ext(code, b"\x90")))
    assert codes_of(info) == "SG403" and words in str(info.value)


def test_malformed_extension_payload_is_sg403(serde: JsonPlusSerializer) -> None:
    """An extension whose payload is not [module, name, arg] is corrupt."""
    with pytest.raises(SerializationError) as info:
        serde.loads_typed(blob(ormsgpack.Ext(0, ormsgpack.packb("x"))))
    assert codes_of(info) == "SG403"


def test_serializer_is_thread_safe(serde: JsonPlusSerializer) -> None:
    """Concurrent dumps/loads with errors in some threads do not cross-contaminate."""
    failures: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(200):
                value = {"i": i, "t": (i, Note(str(i)))}
                assert serde.loads_typed(serde.dumps_typed(value)) == value
                with pytest.raises(SerializationError):
                    serde.dumps_typed([lambda: i])
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_self_referencing_values_are_sg402(serde: JsonPlusSerializer) -> None:
    """A list or dataclass containing itself raises SG402 instead of crashing."""
    loop: list[Any] = []
    loop.append(loop)
    note = Note("x")
    note.text = note  # type: ignore[assignment]
    for value in (loop, {"a": loop}, note, [(note,)]):
        with pytest.raises(SerializationError) as info:
            serde.dumps_typed(value)
        assert codes_of(info) == "SG402" and "containing itself" in str(info.value)
