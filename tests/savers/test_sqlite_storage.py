"""SQLite saver: storage stays linear for growing lists, and several processes share a file."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config

TURNS = 500


def _message(role: str, turn: int) -> dict[str, Any]:
    return {"role": role, "id": f"{role}-{turn}", "content": f"{role} turn {turn} " + "x" * 48}


def test_500_turn_chat_stores_at_most_3x_the_final_list(tmp_path: Path) -> None:
    """A 500-turn chat (2 messages a turn) stores <= 3x the bytes of its final message list."""
    path = tmp_path / "chat.db"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        config, prev, messages, saved = thread_config("chat"), None, [], []
        for turn in range(TURNS):
            messages = [*messages, _message("user", turn), _message("ai", turn)]
            cp, new = next_checkpoint(saver, prev, {"messages": messages, "turn": turn})
            config = saver.put(config, cp, {"source": "loop", "step": turn}, new)
            saved.append((config, messages))
            prev = cp
        final = len(saver.serde.dumps_typed(messages)[1])
        (list_blob_bytes,) = saver.conn.execute(
            "SELECT SUM(LENGTH(blob)) FROM sg_checkpoint_blobs WHERE channel = 'messages'"
        ).fetchone()
        for config, expected in saved[::7] + saved[-1:]:
            found = saver.get_tuple(config)
            assert found is not None and found.checkpoint["channel_values"]["messages"] == expected
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        saver.conn.execute("VACUUM")
    file_bytes = os.path.getsize(path)
    print(
        f"\n500-turn chat: final list {final} B; stored list blobs {list_blob_bytes} B "
        f"({list_blob_bytes / final:.2f}x); whole file {file_bytes} B ({file_bytes / final:.2f}x, "
        f"{(file_bytes - list_blob_bytes) / TURNS:.0f} B/checkpoint besides the list)"
    )
    assert list_blob_bytes <= 3 * final
    # Whatever the per-checkpoint overhead, the file must stay linear (full copies: ~250x).
    assert file_bytes <= 3 * final + 2048 * TURNS


_WRITER = """
import sys
from stepgraph.checkpoint.sqlite import SqliteSaver
from stepgraph.testing.saver_conformance import next_checkpoint, thread_config

path, thread, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with SqliteSaver.from_conn_string(path) as saver:
    config, prev, items = thread_config(thread), None, []
    for i in range(n):
        items = [*items, {"thread": thread, "i": i}]
        cp, new = next_checkpoint(saver, prev, {"items": items})
        config = saver.put(config, cp, {"step": i}, new)
        saver.put_writes(config, [("items", i)], f"task-{i}")
        prev = cp
"""


def test_two_processes_write_one_file(tmp_path: Path) -> None:
    """Two processes writing different threads to one SQLite file both keep full histories."""
    path, n = str(tmp_path / "shared.db"), 40
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, path, f"p{k}", str(n)]) for k in range(2)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    with SqliteSaver.from_conn_string(path) as saver:
        for k in range(2):
            history = list(saver.list(thread_config(f"p{k}")))
            assert len(history) == n
            for age, found in enumerate(history):
                items = found.checkpoint["channel_values"]["items"]
                assert items == [{"thread": f"p{k}", "i": i} for i in range(n - age)]
                assert found.pending_writes == [(f"task-{n - age - 1}", "items", n - age - 1)]


_WORDS = (
    "the of and to in is that for it as was with be by on not this are or from at which but "
    "have an they you were there been one all we their has would when if so no will can more "
    "other what its into than them about time some could these two may first then do any like"
).split()


def _prose(rng: random.Random, chars: int) -> str:
    """Text drawn from a fixed vocabulary: it compresses like prose, not like one repeated
    letter (which would flatter a storage figure)."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(_WORDS))
    return " ".join(words)[:chars]


def _chat_file_bytes(tmp_path: Path, user_chars: int, ai_chars: int) -> tuple[int, int, Any]:
    """Run a 500-turn MessagesState chat on a SQLite file; ``(file bytes, final list bytes)``."""
    messages = pytest.importorskip("langchain_core.messages")
    from stepgraph.graph import END, START, MessagesState, StateGraph

    rng = random.Random(7)

    def assistant(state: MessagesState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [messages.AIMessage(content=_prose(rng, ai_chars), id=f"a{n}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    path = tmp_path / f"chat-{user_chars}.db"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "chat"}}
        for turn in range(TURNS):
            question = messages.HumanMessage(content=_prose(rng, user_chars), id=f"u{turn}")
            out = graph.invoke({"messages": [question]}, config)
        final = len(saver.serde.dumps_typed(out["messages"])[1])
        history = list(graph.get_state_history(config, limit=5))
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return os.path.getsize(path), final, (out, history)


def test_500_turn_graph_chat_file_stays_within_3x_of_the_messages(tmp_path: Path) -> None:
    """The whole SQLite file of a 500-turn chat (3 checkpoints, writes and messages a turn),
    with messages of 40 to a few hundred characters, is at most 3x its final message list."""
    file_bytes, final, (out, history) = _chat_file_bytes(tmp_path, 40, 300)
    print(f"\n500-turn chat: file {file_bytes} B, final messages {final} B, "
          f"{file_bytes / final:.2f}x")  # fmt: skip
    assert len(out["messages"]) == 2 * TURNS
    assert history[0].values["messages"] == out["messages"]
    assert len(history[1].values["messages"]) == 2 * TURNS - 1
    assert file_bytes <= 3 * final


def test_500_turn_graph_chat_with_short_messages_stays_linear(tmp_path: Path) -> None:
    """With very short messages the fixed cost per checkpoint shows, but it stays linear
    (LangGraph's saver stores ~760x the final list on this chat)."""
    file_bytes, final, _ = _chat_file_bytes(tmp_path, 10, 30)
    print(f"\nshort 500-turn chat: file {file_bytes} B, final {final} B, {file_bytes / final:.2f}x")
    assert file_bytes <= 4 * final


def test_a_chat_resumed_by_a_new_saver_every_turn_stays_linear(tmp_path: Path) -> None:
    """Each turn on a fresh saver (a new process, say) stores what one saver would: the list
    and the row read at the start of the run become the delta and diff bases. Without that,
    every turn would snapshot the whole list: the file would grow with the square of the
    turns."""
    messages = pytest.importorskip("langchain_core.messages")
    from stepgraph.graph import END, START, MessagesState, StateGraph

    def assistant(state: MessagesState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [messages.AIMessage(content=f"answer {n} with words", id=f"a{n}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    config = {"configurable": {"thread_id": "chat"}}
    sizes = {}
    for mode in ("one saver", "new saver per turn"):
        path = tmp_path / f"{mode}.db"
        saver_cm = SqliteSaver.from_conn_string(str(path))
        saver = saver_cm.__enter__()
        for turn in range(200):
            if mode != "one saver" and turn:
                saver_cm.__exit__(None, None, None)
                saver_cm = SqliteSaver.from_conn_string(str(path))
                saver = saver_cm.__enter__()
            graph = builder.compile(checkpointer=saver)
            question = messages.HumanMessage(content=f"question {turn}", id=f"u{turn}")
            out = graph.invoke({"messages": [question]}, config)
        saver_cm.__exit__(None, None, None)
        assert len(out["messages"]) == 400
        sizes[mode] = os.path.getsize(path)
    assert sizes["new saver per turn"] <= 1.1 * sizes["one saver"], sizes
