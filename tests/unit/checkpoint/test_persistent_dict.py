"""``PersistentDict`` and ``InMemorySaver(factory=...)``: tables that outlive the saver."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from stepgraph.checkpoint.base import SerializerProtocol
from stepgraph.checkpoint.memory import InMemorySaver, PersistentDict
from stepgraph.graph import END, START, StateGraph


def _graph(saver: InMemorySaver):  # noqa: ANN202 - test helper
    builder = StateGraph(dict)
    builder.add_node("a", lambda s: {"n": s.get("n", 0) + 1})
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    return builder.compile(checkpointer=saver)


def test_round_trip_keeps_tuples_bytes_and_nesting(tmp_path: Path) -> None:
    file = str(tmp_path / "d.json")
    data = PersistentDict(dict, filename=file)
    data[("t", "", "c", 1)] = ("msgpack", b"\x00\xff", None)
    data["x"]["y"] = [1, 2.5, "s", {"k": (True, None)}]
    data.sync()
    back = PersistentDict(dict, filename=file)
    back.load()
    assert back == data
    assert isinstance(next(iter(k for k in back if isinstance(k, tuple))), tuple)


def test_file_is_data_only(tmp_path: Path) -> None:
    file = tmp_path / "d.json"
    file.write_text(json.dumps({"d": [["k", {"py/object": "os.system"}]]}))
    with pytest.raises(ValueError, match="malformed"):
        PersistentDict(filename=str(file)).load()
    data = PersistentDict(filename=str(tmp_path / "e.json"))
    data["f"] = object()
    with pytest.raises(TypeError, match="only dicts"):
        data.sync()


def test_missing_or_empty_file_loads_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    for name in (str(empty), str(tmp_path / "absent")):
        data = PersistentDict(filename=name)
        data.load()
        assert data == {}


def test_saver_with_persistent_tables_writes_them_on_close(tmp_path: Path) -> None:
    file = str(tmp_path / "tables")
    saver = InMemorySaver(factory=partial(PersistentDict, filename=file))
    removed: list[str] = []
    saver.stack.callback(removed.append, "closed")
    config = {"configurable": {"thread_id": "1"}}
    with saver:
        assert _graph(saver).invoke({"n": 0}, config) == {"n": 1}
        assert saver.get_tuple(config) is not None
    assert removed == ["closed"]
    assert Path(file).is_file()
    assert saver.storage == {}  # closing cleared the memory copy

    reloaded = PersistentDict(dict, filename=file)
    reloaded.load()
    assert "1" in reloaded


def test_default_saver_has_an_empty_stack() -> None:
    saver = InMemorySaver()
    with saver as entered:
        assert entered is saver
    assert saver.stack is not None


def test_serializer_protocol_is_exported_at_run_time() -> None:
    class Noop(SerializerProtocol):
        def dumps_typed(self, obj: object) -> tuple[str, bytes]:
            return "bytes", bytes(obj)  # type: ignore[call-overload]

        def loads_typed(self, data: tuple[str, bytes]) -> object:
            return data[1]

    assert Noop().loads_typed(("bytes", b"x")) == b"x"
