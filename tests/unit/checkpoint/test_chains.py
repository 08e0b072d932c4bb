"""The reads memory of delta chains (``checkpoint/_chains``): a read walks only the rows that
are new since the last read, and never returns anything a full walk would not."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from stepgraph.checkpoint._chains import ChainReads
from stepgraph.checkpoint._codec import SaverCodec
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.graph import END, START, MessagesState, StateGraph

CONFIG = {"configurable": {"thread_id": "t"}}


def _chat(saver: Any) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"answer {n} " * 6, id=f"a{n}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def _say(graph: Any, turn: int, config: dict[str, Any] = CONFIG) -> dict[str, Any]:
    question = HumanMessage(content=f"question {turn} " * 6, id=f"u{turn}")
    return graph.invoke({"messages": [question]}, config)


def _messages(saver: SqliteSaver, config: dict[str, Any] = CONFIG) -> list[Any]:
    found = saver.get_tuple(config)
    assert found is not None
    return found.checkpoint["channel_values"]["messages"]


class _Walks:
    """Counts the chain rows a saver splits into elements (rows walked, not recalled)."""

    def __init__(self, saver: SqliteSaver, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = 0
        codec = saver._codec
        elements = codec._elements

        def counting(*args: Any) -> Any:
            self.rows += 1
            return elements(*args)

        monkeypatch.setattr(codec, "_elements", counting)


def test_a_chat_reads_the_same_as_a_cold_reader(tmp_path: Any, monkeypatch: Any) -> None:
    """Turn after turn, what the saver reads (walking only the new rows) equals what a saver
    with no memory reads from the same file."""
    path = str(tmp_path / "c.db")
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _chat(saver)
        walks = _Walks(saver, monkeypatch)
        for turn in range(40):
            out = _say(graph, turn)
            walks.rows = 0
            warm = _messages(saver)
            if turn >= 2:
                assert walks.rows <= 3, f"turn {turn}: {walks.rows} rows walked"
            with SqliteSaver.from_conn_string(path) as cold:
                assert warm == _messages(cold) == out["messages"]
            assert [m.id for m in warm][-2:] == [f"u{turn}", f"a{2 * turn + 1}"]
        entries, spent, budget = saver._codec.cache_usage()["reads"]
        assert entries >= 1 and 0 < spent <= budget


def test_an_older_checkpoint_and_a_fork_read_right(tmp_path: Any) -> None:
    """Reading an earlier version (time travel) and a branch made from it, while the memory
    holds the newest chain: each read equals a cold reader's."""
    path = str(tmp_path / "c.db")
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _chat(saver)
        for turn in range(12):
            _say(graph, turn)
        history = list(saver.list(CONFIG))
        old = history[len(history) // 2].config
        _messages(saver)  # the newest chain, remembered
        with SqliteSaver.from_conn_string(path) as cold:
            assert _messages(saver, old) == _messages(cold, old)
            forked = _say(graph, 99, old)["messages"]
            assert forked[-2].id == "u99"
            assert _messages(saver) == _messages(cold) == forked
            for turn in range(100, 104):  # the fork goes on, its own chain remembered
                assert _say(graph, turn)["messages"] == _messages(cold)


def test_rows_rewritten_by_another_writer_are_walked_again(tmp_path: Any) -> None:
    """Another connection deletes the thread and writes a different chat: the reader's
    memory no longer matches the stored rows, so it walks them and reads the new chat."""
    path = str(tmp_path / "c.db")
    with SqliteSaver.from_conn_string(path) as reader, SqliteSaver.from_conn_string(path) as writer:
        graph = _chat(reader)
        for turn in range(8):
            _say(graph, turn)
        _messages(reader)
        writer.delete_thread("t")
        other = _chat(writer)
        for turn in range(8):
            other.invoke(
                {"messages": [HumanMessage(content=f"other {turn}", id=f"o{turn}")]}, CONFIG
            )
        assert _messages(reader) == _messages(writer)
        assert _messages(reader)[0].content == "other 0"


def test_a_row_changed_in_place_is_not_served_from_memory(tmp_path: Any) -> None:
    """A stored row changed under the reader (same key, other bytes): the read fails or
    differs exactly as a cold reader's does, never returning the remembered elements."""
    path = str(tmp_path / "c.db")
    with SqliteSaver.from_conn_string(path) as saver:
        graph = _chat(saver)
        for turn in range(6):
            _say(graph, turn)
        _messages(saver)
        conn = sqlite3.connect(path)
        try:  # the snapshot row of the chain loses its elements (an empty split list)
            row = conn.execute(
                "SELECT version, blob FROM sg_checkpoint_blobs WHERE channel = 'messages' "
                "AND base_version IS NULL ORDER BY version DESC LIMIT 1"
            ).fetchone()
            conn.execute(
                "UPDATE sg_checkpoint_blobs SET blob = ? WHERE channel = 'messages' AND version = ?",
                (bytes([0x90]), row[0]),
            )
            conn.commit()
        finally:
            conn.close()
        with SqliteSaver.from_conn_string(path) as cold:
            try:
                expected: Any = _messages(cold)
            except Exception as exc:  # noqa: BLE001 - whatever a cold read does
                expected = type(exc)
            try:
                got: Any = _messages(saver)
            except Exception as exc:  # noqa: BLE001
                got = type(exc)
        assert got == expected


def test_deleting_a_thread_forgets_its_chains(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
        graph = _chat(saver)
        for turn in range(3):
            _say(graph, turn)
        _messages(saver)
        assert saver._codec.cache_usage()["reads"][0] >= 1
        saver.delete_thread("t")
        assert saver._codec.cache_usage()["reads"][0] == 0


def _rows(*versions: str) -> list[tuple[str, tuple[str, bytes, str | None]]]:
    """Chain rows head first: each a delta on the next, the last a snapshot."""
    out = []
    for i, v in enumerate(versions):
        base = versions[i + 1] if i + 1 < len(versions) else None
        out.append((v, ("pieced", f"row {v}".encode(), base)))
    return out


def test_recall_uses_only_rows_whose_whole_chain_below_is_unchanged() -> None:
    reads = ChainReads(1 << 20)
    rows = _rows("3", "2", "1")
    parts = [([b"c"], 2), ([b"b"], 2), ([b"a"], 2)]
    reads.remember(("t", "", "m"), rows, parts, None, [b"a", b"b", b"c"])
    stored = {("t", "", "m", v): blob for v, blob in rows}
    entry, usable = reads.recall(stored)[("t", "", "m")]
    assert usable == 0 and entry.part(0)[0] == [b"a", b"b", b"c"]
    assert entry.part(1)[0] == [b"a", b"b"] and entry.snapshot == "1"
    changed = dict(stored)
    changed[("t", "", "m", "2")] = ("pieced", b"other", "1")  # the middle row differs
    assert reads.recall(changed)[("t", "", "m")][1] == 2  # only the snapshot is usable
    changed[("t", "", "m", "1")] = ("pieced", b"other", None)  # the snapshot differs too
    assert reads.recall(changed) == {}
    del stored[("t", "", "m", "1")]  # a row gone
    assert reads.recall(stored) == {}


def _remembered(reads: ChainReads) -> tuple[Any, int]:
    """``(entry, cost)`` of the one channel ``reads`` holds."""
    entry, cost = reads._lru.items[("t", "", "m")]
    return entry, cost


def test_an_entry_built_on_a_recalled_one_equals_one_built_from_a_full_walk() -> None:
    """``remember`` on top of an entry (copying what lies below the row the walk stopped at)
    holds the same rows, positions and cost as a memory that walked the whole chain."""
    rows = _rows("5", "4", "3", "2", "1")
    sizes = [([f"e{v}".encode()], 3) for v, _ in rows]
    elements = [b"e1", b"e2", b"e3", b"e4", b"e5"]
    full = ChainReads(1 << 20)
    full.remember(("t", "", "m"), rows, sizes, None, elements)
    for stop in (0, 1, 2):  # on the head of the entry below, or on a row under it (a fork)
        stepped = ChainReads(1 << 20)
        stepped.remember(("t", "", "m"), rows[3:], sizes[3:], None, elements[:2])
        below, _ = _remembered(stepped)
        if stop:  # the entry below went higher, on rows the new chain does not hold
            higher = [(v, ("pieced", b"x", "4")) for v in ("9", "8")[:stop]] + rows[3:]
            stepped.remember(("t", "", "m"), higher, [([b"x"], 2)] * stop + sizes[3:], None,
                             elements[:2] + [b"x"] * stop)  # fmt: skip
            below, _ = _remembered(stepped)
        stepped.remember(("t", "", "m"), rows[:3], sizes[:3], (below, stop), elements)
        (got, cost), (want, want_cost) = _remembered(stepped), _remembered(full)
        assert (got.keys, got.blobs, got.ends, got.sizes, got.elements, cost) == (
            want.keys, want.blobs, want.ends, want.sizes, want.elements, want_cost
        )  # fmt: skip
        assert got.depth == want.depth == {"1": 0, "2": 1, "3": 2, "4": 3, "5": 4}
        assert [got.position(v) for v, _ in rows] == [0, 1, 2, 3, 4]
        assert got.position("9") is None and got.snapshot == "1"


def test_recall_looks_only_at_the_channels_asked_for() -> None:
    reads = ChainReads(1 << 20)
    rows = _rows("2", "1")
    reads.remember(("t", "", "m"), rows, [([b"b"], 2), ([b"a"], 2)], None, [b"a", b"b"])
    stored = {("t", "", "m", v): blob for v, blob in rows}
    assert reads.recall(stored, [("t", "", "m")])[("t", "", "m")][1] == 0
    assert reads.recall(stored, [("t", "", "other")]) == {}
    assert reads.recall(stored, []) == {}


def test_a_codec_without_the_memory_reads_as_before() -> None:
    """Savers that do not call ``recall`` (the in-memory saver) keep no reads memory."""
    from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    codec = SaverCodec(JsonPlusSerializer())
    assert codec.recall({("t", "", "m", "1"): ("msgpack", b"\x90", None)}) == {}
    assert "reads" not in codec.cache_usage()
