"""The graph a ``stepgraph serve`` subprocess runs in the SIGKILL tests (``test_server_crash``).

``durable``: ``a -> b -> c``, each node appending its name to ``nodes.log`` in the directory
``STEPGRAPH_CRASH_DIR`` names; ``b`` logs ``b-start`` and then blocks while the file
``block`` exists there (the test kills the server then), and logs ``b-end`` when it goes on.
"""

from __future__ import annotations

import operator
import os
import time
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]


def _dir() -> Path:
    return Path(os.environ["STEPGRAPH_CRASH_DIR"])


def _log(line: str) -> None:
    with open(_dir() / "nodes.log", "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _a(state: State) -> dict[str, Any]:
    _log("a")
    return {"steps": ["a"]}


def _b(state: State) -> dict[str, Any]:
    _log("b-start")
    while (_dir() / "block").exists():
        time.sleep(0.02)
    _log("b-end")
    return {"steps": ["b"]}


def _c(state: State) -> dict[str, Any]:
    _log("c")
    return {"steps": ["c"]}


durable = (
    StateGraph(State)
    .add_node("a", _a)
    .add_node("b", _b)
    .add_node("c", _c)
    .add_edge(START, "a")
    .add_edge("a", "b")
    .add_edge("b", "c")
    .add_edge("c", END)
)
