"""SQLite saver: storage stays linear for growing lists, and several processes share a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
