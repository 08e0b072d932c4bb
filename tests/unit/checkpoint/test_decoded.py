"""Decoded list elements (``checkpoint/_decoded``): fresh copies, never shared, bounded, and
served only for the exact bytes they were decoded from."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from stepgraph.checkpoint import _pieces
from stepgraph.checkpoint._decoded import (
    COST_FACTOR,
    DecodedElements,
    Uncloneable,
    array_header,
    clone,
    maker,
)
from stepgraph.checkpoint._lru import ENTRY_OVERHEAD
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.graph import END, START, MessagesState, StateGraph

SERDE = JsonPlusSerializer()


def _mutable_ids(value: Any, out: set[int] | None = None) -> set[int]:
    """Ids of every mutable object reachable from ``value`` (containers and models)."""
    out = set() if out is None else out
    if isinstance(value, list | dict | set | bytearray) or hasattr(value, "__dict__"):
        if id(value) in out:
            return out
        out.add(id(value))
    if isinstance(value, dict):
        for k, v in value.items():
            _mutable_ids(k, out)
            _mutable_ids(v, out)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            _mutable_ids(v, out)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        _mutable_ids(vars(value), out)
        for extra in ("__pydantic_extra__", "__pydantic_private__", "__pydantic_fields_set__"):
            found = getattr(value, extra, None)
            if found is not None:
                out.add(id(found))
                _mutable_ids(found, out)
    return out


def _messages() -> list[Any]:
    return [
        HumanMessage(content="hello there", id="u1", additional_kwargs={"meta": {"k": [1, 2]}}),
        AIMessage(
            content=[{"type": "text", "text": "calling"}], id="a1",
            tool_calls=[{"name": "add", "args": {"a": 1, "b": [2, 3]}, "id": "c1"}],
            response_metadata={"model": "m", "usage": {"in": 3}},
        ),
        ToolMessage(content="5", tool_call_id="c1", id="t1", artifact={"raw": [5]}),
    ]  # fmt: skip


def test_a_copy_is_equal_and_shares_nothing_mutable() -> None:
    for master in _messages():
        make = maker(master)
        a, b = make(), make()
        assert a == master and b == master and type(a) is type(master)
        assert a.__pydantic_fields_set__ == master.__pydantic_fields_set__
        masters, ones, twos = _mutable_ids(master), _mutable_ids(a), _mutable_ids(b)
        assert not masters & ones and not masters & twos and not ones & twos


def test_mutating_a_copy_changes_neither_the_master_nor_other_copies() -> None:
    master = _messages()[1]
    make = maker(master)
    a = make()
    a.tool_calls[0]["args"]["b"].append(99)
    a.response_metadata["usage"]["in"] = 0
    a.content[0]["text"] = "changed"
    b = make()
    assert b == master
    assert master.tool_calls[0]["args"]["b"] == [2, 3]


@dataclasses.dataclass
class _Point:
    x: int


class _Hooked(BaseModel):
    x: int = 0

    def model_post_init(self, context: Any) -> None:  # decoding runs it; a copy would not
        pass


@pytest.mark.parametrize(
    "value", [bytearray(b"x"), _Point(1), [1, {"p": _Point(2)}], {_Point: 1}, _Hooked()]
)
def test_types_it_cannot_copy_exactly_are_refused(value: Any) -> None:
    with pytest.raises(Uncloneable):
        maker(value)


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.binary(max_size=20)
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    | st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=3) | st.sets(st.text(max_size=3), max_size=3),
    max_leaves=30,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(plain)
def test_clone_property_equal_and_disjoint(value: Any) -> None:
    copy = clone(value)
    assert copy == value and type(copy) is type(value)
    assert not _mutable_ids(copy) & _mutable_ids(value)


@settings(max_examples=200, deadline=None)
@given(st.lists(plain, max_size=12))
def test_elements_of_a_split_list_are_its_items_encodings(items: list[Any]) -> None:
    """``_pieces.elements`` of a skeleton gives each item's own encoding (pieces joined)."""
    pack = SERDE._codec.dumps
    found = _pieces.split_items(items, pack)
    assert found is not None
    skeleton, pieces, _ = found
    got = _pieces.elements(skeleton, pieces.get)
    assert got is not None
    assert got[0] == [pack(item) for item in items]
    assert SERDE.loads_typed(("msgpack", array_header(len(items)) + b"".join(got[0]))) == items


def _loads(data: bytes) -> Any:
    return SERDE.loads_typed(("msgpack", data))


def test_elements_are_decoded_once_then_copied() -> None:
    cache = DecodedElements(1 << 20)
    elements = [SERDE._codec.dumps(m) for m in _messages()]
    calls: list[int] = []

    def counting(data: bytes) -> Any:
        calls.append(1)
        return _loads(data)

    first = cache.load(elements, counting)
    second = cache.load(elements, counting)
    assert len(calls) == 1  # the second read decoded nothing
    assert first == second == _messages()
    assert not _mutable_ids(first) & _mutable_ids(second)


def test_the_cache_stays_within_its_budget() -> None:
    elements = [SERDE._codec.dumps(HumanMessage(content=f"message {i} " * 8, id=f"m{i}"))
                for i in range(200)]  # fmt: skip
    budget = 20 * (COST_FACTOR * len(elements[0]) + ENTRY_OVERHEAD)
    cache = DecodedElements(budget)
    for _ in range(2):
        assert cache.load(elements, _loads) == [_loads(array_header(1) + e)[0] for e in elements]
        assert cache.spent <= budget and 0 < len(cache) <= 21


def test_an_element_it_cannot_copy_is_decoded_at_every_read() -> None:
    cache = DecodedElements(1 << 20)
    element = SERDE._codec.dumps({"point": "x" * 40})
    calls: list[int] = []

    def loads(data: bytes) -> Any:  # stands for a decoder giving a type clone() refuses
        calls.append(1)
        return [{"point": _Point(len(calls))}]

    a = cache.load([element], loads)
    b = cache.load([element], loads)
    assert len(calls) == 2 and a[0]["point"] is not b[0]["point"]


def test_copyable_elements_read_beside_one_it_cannot_copy() -> None:
    """A read of elements all seen before takes the all-copies path only while no element
    it cannot copy is held; once that one is evicted, copies are made again."""
    msgs = [HumanMessage(content=f"message {i} " * 8, id=f"m{i}") for i in range(6)]
    copyable = [SERDE._codec.dumps(m) for m in msgs]
    odd = SERDE._codec.dumps({"point": "y" * (len(copyable[0]) - 14)})
    calls: list[bytes] = []

    def loads(data: bytes) -> Any:
        calls.append(data)
        return [{"point": _Point(len(calls))} if type(e) is dict else e for e in _loads(data)]

    cache = DecodedElements(3 * (COST_FACTOR * len(copyable[0]) + ENTRY_OVERHEAD) + 100)
    cache.load([odd, copyable[0]], loads)
    first = cache.load([odd, copyable[0]], loads)
    assert len(calls) == 2 and isinstance(first[0]["point"], _Point)  # decoded again
    assert first[1] == msgs[0] and cache._uncloneable == 1
    cache.load(copyable[1:], loads)  # the odd entry is evicted first (first in, first out)
    assert cache._uncloneable == 0
    before = len(calls)
    assert cache.load(copyable[-2:], loads) == msgs[-2:] and len(calls) == before


# --- through the SQLite saver -----------------------------------------------------------------


def _chat_graph(saver: SqliteSaver) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"answer {n} " * 5, id=f"a{n}",
                                       additional_kwargs={"n": [n]})]}  # fmt: skip

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def _say(graph: Any, turn: int, thread: str = "t") -> dict[str, Any]:
    question = HumanMessage(content=f"question {turn} " * 5, id=f"u{turn}")
    return graph.invoke({"messages": [question]}, {"configurable": {"thread_id": thread}})


def test_loads_never_share_objects(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
        graph = _chat_graph(saver)
        for turn in range(4):
            out = _say(graph, turn)
        config = {"configurable": {"thread_id": "t"}}
        one = saver.get_tuple(config)
        two = saver.get_tuple(config)
        assert one is not None and two is not None
        a, b = (
            one.checkpoint["channel_values"]["messages"],
            two.checkpoint["channel_values"]["messages"],
        )
        assert a == b == out["messages"] and len(a) == 8
        assert not _mutable_ids(a) & _mutable_ids(b)
        assert not _mutable_ids(a) & _mutable_ids(out["messages"])
        # A user mutating a run's output does not change what the next run loads.
        out["messages"][0].content = "mutated"
        out["messages"][1].additional_kwargs["n"].append(-1)
        a[2].content = "mutated too"
        again = _say(graph, 4)["messages"]
        assert again[0].content == "question 0 " * 5
        assert again[1].additional_kwargs == {"n": [1]}
        assert again[2].content == "question 1 " * 5


def test_another_writer_is_seen_not_a_stale_copy(tmp_path: Any) -> None:
    """What the cache serves is keyed by the stored bytes: when another connection rewrites
    the thread, the reader gets the new messages, not the ones it decoded before."""
    path = str(tmp_path / "c.db")
    with SqliteSaver.from_conn_string(path) as reader, SqliteSaver.from_conn_string(path) as writer:
        for turn in range(3):
            _say(_chat_graph(reader), turn)
        config = {"configurable": {"thread_id": "t"}}
        before = reader.get_tuple(config)
        assert before is not None
        writer.delete_thread("t")
        graph = _chat_graph(writer)
        for turn in range(3):
            graph.invoke({"messages": [HumanMessage(content=f"other {turn} " * 5, id=f"u{turn}")]},
                         {"configurable": {"thread_id": "t"}})  # fmt: skip
        after = reader.get_tuple(config)
        assert after is not None
        messages = after.checkpoint["channel_values"]["messages"]
        assert [m.content for m in messages[::2]] == [f"other {t} " * 5 for t in range(3)]
        assert messages == writer.get_tuple(config).checkpoint["channel_values"]["messages"]  # type: ignore[union-attr]


def _rows(path: str) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of a saver file without what differs per run (ids, versions, timestamps)."""
    conn = sqlite3.connect(path)
    try:
        return {
            "blobs": sorted(conn.execute(
                "SELECT channel, type, blob, base_version IS NULL FROM sg_checkpoint_blobs")),
            "writes": sorted(conn.execute(
                "SELECT idx, channel, type, blob FROM sg_checkpoint_writes")),
            "pieces": sorted(conn.execute("SELECT digest, data FROM sg_checkpoint_pieces")),
            "kinds": sorted(conn.execute("SELECT kind, count(*) FROM sg_checkpoints GROUP BY kind")),
        }  # fmt: skip
    finally:
        conn.close()


def test_the_stored_rows_and_loaded_values_do_not_depend_on_the_cache(tmp_path: Any) -> None:
    """The same chat, with the decoded-elements cache and without it: the same rows (but
    for ids, versions and times, which are new in every run) and the same values."""
    outs = []
    for cached in (True, False):
        path = str(tmp_path / f"c{cached}.db")
        with SqliteSaver.from_conn_string(path) as saver:
            if not cached:
                saver._codec._decoded = None
            graph = _chat_graph(saver)
            loaded = []
            for turn in range(40):
                out = _say(graph, turn)
                found = saver.get_tuple({"configurable": {"thread_id": "t"}})
                assert found is not None
                loaded.append(found.checkpoint["channel_values"]["messages"])
        outs.append((out["messages"], loaded, _rows(path)))
    (messages_on, loaded_on, rows_on), (messages_off, loaded_off, rows_off) = outs
    assert messages_on == messages_off and loaded_on == loaded_off
    assert rows_on == rows_off


@pytest.mark.skipif(os.environ.get("STEPGRAPH_SAVER_CACHE_BYTES") == "0", reason="no cache")
def test_the_saver_reports_the_cache(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
        graph = _chat_graph(saver)
        for turn in range(3):
            _say(graph, turn)
        entries, spent, budget = saver._codec.cache_usage()["decoded"]
        assert entries >= 4 and 0 < spent <= budget


def test_a_long_read_pauses_the_collector_and_leaves_it_as_found() -> None:
    import gc
    import threading

    from stepgraph import _collector

    cache = DecodedElements(1 << 24)
    items = [{"role": "user", "content": f"message {i} " * 4, "id": str(i)} for i in range(400)]
    elements = [SERDE.dumps_typed(item)[1] for item in items]
    seen: list[bool] = []

    def loads(data: bytes) -> Any:
        seen.append(gc.isenabled())
        return SERDE.loads_typed(("msgpack", data))

    assert gc.isenabled()
    assert cache.load(elements, loads) == items and seen == [False] and gc.isenabled()
    gc.disable()  # a caller that turned the collector off keeps it off
    try:
        cache.load(elements[:1] + [SERDE.dumps_typed({"x": i})[1] for i in range(300)], loads)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert cache.load(elements[:10], loads) == items[:10]  # short: nothing paused
    # loads on several threads at once: the collector is on again once all are done
    barrier = threading.Barrier(4)

    def read() -> None:
        barrier.wait()
        for _ in range(20):
            assert cache.load(elements, loads) == items

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled() and _collector._state == [0, False]
