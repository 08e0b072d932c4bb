"""Reading blobs written by LangGraph: its msgpack extensions and the legacy "json" type."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import json
import pathlib
import re
import uuid
from dataclasses import dataclass
from typing import Any

import ormsgpack
import pytest
from pydantic import BaseModel

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError
from stepgraph.types import Interrupt, Send


class Doc(BaseModel):
    title: str
    tags: list[str] = []


@dataclass
class Note:
    text: str


def ext(code: int, *payload: Any) -> ormsgpack.Ext:
    """A msgpack extension laid out as LangGraph writes it."""
    return ormsgpack.Ext(code, ormsgpack.packb(list(payload)))


def load_msgpack(value: Any, serde: JsonPlusSerializer | None = None) -> Any:
    serde = serde or JsonPlusSerializer()
    return serde.loads_typed(("msgpack", ormsgpack.packb(value)))


def load_json(value: Any, serde: JsonPlusSerializer | None = None) -> Any:
    serde = serde or JsonPlusSerializer()
    return serde.loads_typed(("json", json.dumps(value).encode()))


def lc2(ident: list[str], **rest: Any) -> dict[str, Any]:
    return {"lc": 2, "type": "constructor", "id": ident, **rest}


UTC_ISO = "2024-01-02T03:04:05+00:00"

LANGGRAPH_EXTS = [
    (ext(3, "datetime", "datetime", UTC_ISO, "fromisoformat"), dt.datetime.fromisoformat(UTC_ISO)),
    (ext(1, "datetime", "date", [2024, 1, 2]), dt.date(2024, 1, 2)),
    (
        ext(
            2,
            "datetime",
            "time",
            {"hour": 1, "minute": 2, "second": 3, "microsecond": 0, "tzinfo": None, "fold": 0},
        ),
        dt.time(1, 2, 3),
    ),
    (ext(1, "datetime", "timedelta", [1, 2, 3]), dt.timedelta(1, 2, 3)),
    (ext(0, "builtins", "set", [1, 2]), {1, 2}),
    (ext(0, "builtins", "frozenset", [1]), frozenset({1})),
    (ext(0, "collections", "deque", [1, 2]), collections.deque([1, 2])),
    (
        ext(0, "uuid", "UUID", "12345678123456781234567812345678"),
        uuid.UUID("12345678123456781234567812345678"),
    ),
    (ext(0, "decimal", "Decimal", "1.5"), decimal.Decimal("1.5")),
    (ext(1, "pathlib", "PosixPath", ["/", "a", "b"]), pathlib.PosixPath("/a/b")),
    (ext(1, "re", "compile", ["a+", 32]), re.compile("a+")),
    (ext(1, "langgraph.types", "Send", ["node", {"x": 1}]), Send("node", {"x": 1})),
    (ext(2, "langgraph.types", "Interrupt", {"value": "v", "id": "i"}), Interrupt("v", "i")),
]


@pytest.mark.parametrize(("packed", "expected"), LANGGRAPH_EXTS)
def test_langgraph_msgpack_extensions_load(packed: ormsgpack.Ext, expected: Any) -> None:
    """Extensions written by LangGraph's serializer load as the same values."""
    result = load_msgpack({"v": packed})["v"]
    assert result == expected and type(result) is type(expected)


def test_langgraph_pydantic_v2_dump_is_validated() -> None:
    """LangGraph's model_dump() payload (4 fields) is rebuilt by validation."""
    serde = JsonPlusSerializer(allowed_types=[Doc])
    packed = ext(5, __name__, "Doc", {"title": "t", "tags": ["a"]}, "model_validate_json")
    assert load_msgpack(packed, serde) == Doc(title="t", tags=["a"])


def test_langgraph_pydantic_invalid_dump_falls_back_to_construct() -> None:
    """A payload that no longer validates is still constructed, like LangGraph does."""
    serde = JsonPlusSerializer(allowed_types=[Doc])
    result = load_msgpack(ext(5, __name__, "Doc", {"title": 5}, "model_validate_json"), serde)
    assert type(result) is Doc and result.title == 5


def test_langgraph_blob_naming_unregistered_class_is_refused() -> None:
    """A LangGraph blob naming a class outside the allow-list raises SG401."""
    packed = ext(2, "langgraph.graph.state", "CompiledStateGraph", {"value": {}})
    with pytest.raises(SerializationError) as info:
        load_msgpack(packed)
    assert info.value.code == "SG401"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            lc2(["datetime", "datetime"], method="fromisoformat", args=[UTC_ISO]),
            dt.datetime.fromisoformat(UTC_ISO),
        ),
        (lc2(["builtins", "set"], args=[[1, 2]]), {1, 2}),
        (lc2(["builtins", "bytes"], method="fromhex", args=["6869"]), b"hi"),
        (lc2(["builtins", "bytearray"], method="fromhex", args=["6869"]), bytearray(b"hi")),
        (
            lc2(["uuid", "UUID"], args=["12345678123456781234567812345678"]),
            uuid.UUID("12345678123456781234567812345678"),
        ),
        (lc2(["pathlib", "Path"], args=["/", "x"]), pathlib.Path("/x")),
        (lc2(["datetime", "timedelta"], args=[1, 0, 0]), dt.timedelta(days=1)),
    ],
)
def test_legacy_json_constructors_load(doc: dict[str, Any], expected: Any) -> None:
    """Legacy "json" blobs with lc=2 constructors are revived under the allow-list."""
    result = load_json({"value": doc, "plain": {"a": 1}})
    assert result["value"] == expected and type(result["value"]) is type(expected)
    assert result["plain"] == {"a": 1}


def test_legacy_json_model_uses_method_list() -> None:
    """A model stored with method [None, "model_construct"] is rebuilt."""
    serde = JsonPlusSerializer(allowed_types=[Doc, Note])
    doc = lc2(
        [*__name__.split("."), "Doc"], method=[None, "model_construct"], kwargs={"title": "t"}
    )
    note = lc2([*__name__.split("."), "Note"], kwargs={"text": "n"})
    assert load_json([doc, note], serde) == [Doc(title="t"), Note("n")]


def test_legacy_json_refuses_unallowed_constructor() -> None:
    """A legacy blob naming os.system raises SG401 instead of returning None."""
    with pytest.raises(SerializationError) as info:
        load_json(lc2(["os", "system"], args=["echo pwned"]))
    assert info.value.code == "SG401"


def test_legacy_json_refuses_unsafe_method() -> None:
    """A legacy blob may only call whitelisted methods."""
    with pytest.raises(SerializationError) as info:
        load_json(lc2(["datetime", "datetime"], method="now"))
    assert info.value.code == "SG401"


def test_legacy_json_langchain_object_outside_langchain_is_refused() -> None:
    """An lc=1 object naming a non-langchain class is refused."""
    pytest.importorskip("langchain_core")
    with pytest.raises(SerializationError) as info:
        load_json({"lc": 1, "type": "constructor", "id": ["os", "system"], "kwargs": {}})
    assert info.value.code == "SG401"


def test_legacy_json_corrupt_data_is_sg403() -> None:
    """Invalid JSON raises SG403."""
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer().loads_typed(("json", b"{not json"))
    assert info.value.code == "SG403"
