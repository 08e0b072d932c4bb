"""Storage of a long chat on the SQLite savers of stepgraph and LangGraph, side by side.

    .venv/bin/python benchmarks/chat_storage.py            # 500 turns, three message sizes
    .venv/bin/python benchmarks/chat_storage.py --turns 100 --no-langgraph

Each run is a fresh process: a ``MessagesState`` graph with one assistant node, invoked once
per turn on one thread with a user message (the node answers with an assistant message), on
a new SQLite file. Messages are langchain-core messages whose text is drawn from a fixed
vocabulary with a fixed seed (so it compresses like prose, not like repeated letters). After
the last turn the saver is closed (SQLite merges the WAL into the file) and the report gives
the file size against the final message list: its msgpack encoding and its JSON
(``message.model_dump()``). LangGraph runs from ``benchmarks/.lgvenv``
(``bash benchmarks/setup_langgraph.sh``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANGGRAPH_PYTHON = HERE / ".lgvenv" / "bin" / "python"
SIZES = {"short": (40, 80), "medium": (150, 400), "long": (400, 1200)}
"""Characters of (user, assistant) message text."""

_WORKER = r"""
import json, os, random, sys
pkg, turns, user_chars, ai_chars, thread_id, path = sys.argv[1:7]
turns, user_chars, ai_chars = int(turns), int(user_chars), int(ai_chars)
graph_mod = __import__(f"{pkg}.graph", fromlist=["StateGraph"])
SqliteSaver = __import__(f"{pkg}.checkpoint.sqlite", fromlist=["SqliteSaver"]).SqliteSaver
from langchain_core.messages import AIMessage, HumanMessage

WORDS = ("the of and to in is that for it as was with be by on not this are or from at which "
         "but have an they you were there been one all we their has would when if so no will "
         "can more other what its into than them about time some could these two may first "
         "then do any like now over such our even most made after also did many before must "
         "through back years where much your way well down should because each just those "
         "people how too little state good very make world still own see work long get here "
         "between both life being under never day same another know while last might great "
         "old year off come since against go came right used take three").split()
rng = random.Random(7)

def text(n):
    out, size = [], 0
    while size < n:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]

def assistant(state):
    n = len(state["messages"])
    return {"messages": [AIMessage(content=text(ai_chars), id=f"a{n}")]}

builder = graph_mod.StateGraph(graph_mod.MessagesState)
builder.add_node("assistant", assistant)
builder.add_edge(graph_mod.START, "assistant")
builder.add_edge("assistant", graph_mod.END)
config = {"configurable": {"thread_id": thread_id}}
with SqliteSaver.from_conn_string(path) as saver:
    graph = builder.compile(checkpointer=saver)
    for turn in range(turns):
        question = HumanMessage(content=text(user_chars), id=f"u{turn}")
        out = graph.invoke({"messages": [question]}, config)
    messages = out["messages"]
    packed = len(saver.serde.dumps_typed(messages)[1])
json_bytes = len(json.dumps([m.model_dump() for m in messages]))
size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
print(json.dumps({"file": size, "msgpack": packed, "json": json_bytes, "n": len(messages)}))
"""


def run(python: str, pkg: str, turns: int, size: str, thread_id: str) -> dict[str, int]:
    user_chars, ai_chars = SIZES[size]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chat.db")
        done = subprocess.run(
            [python, "-c", _WORKER, pkg, str(turns), str(user_chars), str(ai_chars), thread_id,
             path],
            capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{pkg} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--sizes", default="short,medium,long")
    parser.add_argument("--no-langgraph", action="store_true")
    parser.add_argument("--thread-id", default="chat", help="e.g. a UUID, as servers use")
    args = parser.parse_args()
    pkgs = [("stepgraph", sys.executable)]
    if not args.no_langgraph and LANGGRAPH_PYTHON.exists():
        pkgs.append(("langgraph", str(LANGGRAPH_PYTHON)))
    print(f"{args.turns}-turn chat, thread id {args.thread_id!r}, bytes at rest\n")
    print("| messages (user/assistant chars) | package | file | final list (msgpack) | "
          "file / list | file / list JSON |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    for size in args.sizes.split(","):
        for pkg, python in pkgs:
            r = run(python, pkg, args.turns, size, args.thread_id)
            chars = "/".join(map(str, SIZES[size]))
            print(f"| {size} ({chars}) | {pkg} | {r['file']:,} | {r['msgpack']:,} | "
                  f"{r['file'] / r['msgpack']:.2f}x | {r['file'] / r['json']:.2f}x |",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
