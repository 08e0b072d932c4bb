"""The exact-name resolver: what a blob's ``(module, name)`` may resolve to, and how to allow more."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from typing import Any

import ormsgpack
import pytest

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError, TypeRegistry
from stepgraph.checkpoint.serde import jsonplus as jsonplus_module
from stepgraph.checkpoint.serde._allowlist import LANGCHAIN_CLASSES, builtin_table
from stepgraph.checkpoint.serde.types import NEVER_MODULES, method_allowed


@dataclass
class Outer:
    value: int

    @dataclass
    class Inner:
        value: int


Alias = Outer  # a second name for the class in this module


def helper() -> None:
    """A function of an allowed module: never resolvable."""


def ext(code: int, *payload: Any) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb(list(payload)))


def load(value: Any, serde: JsonPlusSerializer | None = None) -> Any:
    return (serde or JsonPlusSerializer()).loads_typed(("msgpack", ormsgpack.packb(value)))


def refused(module: str, name: str, registry: TypeRegistry | None = None) -> str:
    with pytest.raises(SerializationError) as info:
        (registry or TypeRegistry()).resolve(module, name)
    return info.value.code


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("langchain_core.messages.utils", "inspect.builtins.map"),
        ("langchain_core.messages.ai", "operator.methodcaller"),
        ("langchain_core.messages.ai", "logging.FileHandler"),
        ("langchain_core.messages.ai", "logging"),
        ("langchain_core.messages", "HumanMessage"),  # re-exported: not where it is defined
        ("builtins", "tuple.__class__"),
        ("datetime", "datetime.fromtimestamp"),
        ("stepgraph.types", "Send.__init__"),
        ("stepgraph.types", "interrupt"),
        ("builtins", "map"),
        ("builtins", "type"),
        ("builtins", "object"),
    ],
)
def test_names_outside_the_exact_table_are_refused_by_default(module: str, name: str) -> None:
    assert refused(module, name) == "SG401"


def test_an_allowed_module_prefix_resolves_only_classes_defined_under_their_name() -> None:
    registry = TypeRegistry(modules=[__name__.split(".")[0]])
    assert registry.resolve(__name__, "Outer") is Outer
    assert registry.resolve(__name__, "Outer.Inner") is Outer.Inner
    assert refused(__name__, "Alias", registry) == "SG401"  # another name for Outer
    assert refused(__name__, "helper", registry) == "SG401"  # a function
    assert refused(__name__, "json", registry) == "SG401"  # a module it imported
    assert refused(__name__, "json.JSONDecoder", registry) == "SG401"  # a walk through it
    assert refused(__name__, "Outer.__init__", registry) == "SG401"


def test_an_allowed_prefix_never_imports() -> None:
    assert "xml.dom.minidom" not in sys.modules
    registry = TypeRegistry(modules=["xml"])
    assert refused("xml.dom.minidom", "Document", registry) == "SG401"
    assert "xml.dom.minidom" not in sys.modules


def test_never_modules_stay_refused_even_when_everything_is_allowed() -> None:
    registry = TypeRegistry(allow_all=True, modules=["os", "subprocess"],
                            names=[("subprocess", "Popen"), ("logging", "FileHandler")])
    for module, name in [("subprocess", "Popen"), ("logging", "FileHandler"), ("os", "system"),
                         ("builtins", "map"), ("functools", "partial"), ("operator", "itemgetter"),
                         ("importlib.machinery", "SourceFileLoader")]:
        assert refused(module, name, registry) == "SG401", (module, name)
    assert {"builtins", "os", "subprocess", "operator", "logging", "pickle"} <= NEVER_MODULES


def test_allow_all_imports_exact_classes_only() -> None:
    registry = TypeRegistry(allow_all=True)
    assert registry.resolve("json.decoder", "JSONDecoder").__name__ == "JSONDecoder"
    assert refused("json", "JSONDecoder", registry) == "SG401"  # re-exported in json
    assert refused("json", "loads", registry) == "SG401"


def test_registered_class_resolves_under_qualname_and_name() -> None:
    registry = TypeRegistry([Outer.Inner])
    assert registry.resolve(__name__, "Outer.Inner") is Outer.Inner
    assert registry.resolve(__name__, "Inner") is Outer.Inner  # LangGraph writes __name__


@pytest.mark.parametrize(
    "make",
    [
        lambda: JsonPlusSerializer(allowed_msgpack_modules=[(__name__, "Outer")]),
        lambda: JsonPlusSerializer(allowed_msgpack_modules=[(*__name__.split("."), "Outer")]),
        lambda: JsonPlusSerializer(allowed_json_modules=[(*__name__.split("."), "Outer")]),
        lambda: JsonPlusSerializer(allowed_msgpack_modules=[Outer]),
        lambda: JsonPlusSerializer().with_msgpack_allowlist([(__name__, "Outer")]),
    ],
)
def test_langgraph_allowlist_parameters_allow_exact_names(make: Any) -> None:
    serde = make()
    assert load(ext(2, __name__, "Outer", {"value": 1}), serde) == Outer(1)
    with pytest.raises(SerializationError) as info:
        load(ext(2, __name__, "Alias", {"value": 1}), serde)
    assert info.value.code == "SG401"


def test_the_builtin_table_is_exact_and_holds_no_functions_but_its_two_builders() -> None:
    table = builtin_table()
    functions = {k for k, v in table.items() if not isinstance(v, type)}
    assert functions == {("re", "compile"),
                         ("stepgraph.checkpoint.serde.types", "decode_surrogates")}
    for (module, name), obj in table.items():
        if isinstance(obj, type) and module not in ("pathlib", "pathlib._local"):
            assert (obj.__module__, obj.__qualname__) == (module, name)


def test_langchain_classes_are_messages_and_document() -> None:
    names = {name for _, name in LANGCHAIN_CLASSES}
    assert {"HumanMessage", "AIMessage", "ToolMessage", "RemoveMessage", "Document"} <= names
    assert not names & {"Blob", "BaseMedia", "ChatPromptTemplate"}


def test_method_calls_are_limited_to_fixed_pairs() -> None:
    import datetime

    from pydantic import BaseModel

    class Model(BaseModel):
        x: int = 0

    assert method_allowed(datetime.datetime, "fromisoformat")
    assert not method_allowed(datetime.datetime, "fromtimestamp")
    assert not method_allowed(bytes, "fromhex")
    assert method_allowed(Model, "model_construct") and method_allowed(Model, "model_validate")
    assert not method_allowed(Model, "model_validate_json")
    assert not method_allowed(Outer, "model_construct")


@pytest.mark.parametrize(
    "ident",
    [["langchain", "schema", "messages", "AIMessage"], ["langchain_core", "messages", "AIMessage"],
     ["langchain_core", "messages", "ai", "AIMessage"]],
)
def test_lc1_message_ids_load(ident: list[str]) -> None:
    messages = pytest.importorskip("langchain_core.messages")
    doc = {"lc": 1, "type": "constructor", "id": ident, "kwargs": {"content": "hi", "id": "1"}}
    result = JsonPlusSerializer().loads_typed(("json", json.dumps(doc).encode()))
    assert result == messages.AIMessage(content="hi", id="1")


def test_lc1_secret_is_not_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``secret`` node stays an inert dict: stepgraph never looks the variable up."""
    monkeypatch.setenv("SG_TEST_SECRET", "hunter2")
    doc = {"v": {"lc": 1, "type": "secret", "id": ["SG_TEST_SECRET"]}}
    result = JsonPlusSerializer().loads_typed(("json", json.dumps(doc).encode()))
    assert "hunter2" not in repr(result)


def test_langgraph_strict_env_false_is_reported_not_obeyed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LANGGRAPH_STRICT_MSGPACK", "false")
    monkeypatch.setattr(jsonplus_module, "_warned_strict_env", False)
    with caplog.at_level(logging.WARNING, logger="stepgraph.checkpoint.serde"):
        serde = JsonPlusSerializer()
    assert "always strict" in caplog.text
    with pytest.raises(SerializationError):
        load(ext(0, "langchain_core.messages.ai", "operator.methodcaller", "x"), serde)


def test_limits_must_be_decode_limits() -> None:
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer(limits={"max_depth": 3})  # type: ignore[arg-type]
    assert info.value.code == "SG400"
