"""The run API is typed as LangGraph types it: a type checker (mypy, a dev dependency)
accepts LangGraph-style calls and flags bad modes, versions, durabilities, configs and
unknown keyword arguments, each at its own line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

SAMPLE = '''
from typing import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, GraphOutput, StateSnapshot
from stepgraph.config import RunnableConfig


class State(TypedDict):
    x: int


builder = StateGraph(State)
builder.add_node("inc", lambda s: {"x": s["x"] + 1})
builder.add_edge(START, "inc")
graph = builder.compile(checkpointer=InMemorySaver())
thread: RunnableConfig = {"configurable": {"thread_id": "1"}}

graph.invoke({"x": 1}, thread, durability="exit", print_mode="updates")
for part in graph.stream({"x": 1}, thread, stream_mode=["values", "updates"], subgraphs=True):
    pass
out = graph.invoke({"x": 1}, thread, version="v2")
graph.invoke(Command(resume=1), thread, interrupt_before="*")
snap: StateSnapshot = graph.get_state(thread, subgraphs=True)
new_config: RunnableConfig = graph.update_state(thread, {"x": 3}, as_node="inc")
history = list(graph.get_state_history(thread, limit=2, before=new_config))
graph.batch([{"x": 1}, {"x": 2}], thread, return_exceptions=True)
#
graph.invoke({"x": 1}, durability="never")  # BAD
graph.stream({"x": 1}, stream_mode="valuez")  # BAD
graph.invoke({"x": 1}, checkpoint_during=True)  # BAD
graph.invoke({"x": 1}, version="v3")  # BAD
graph.get_state("thread-1")  # BAD
builder.compile(checkpointr=None)  # BAD
graph.update_state(thread, {"x": 1}, as_node=3)  # BAD
'''


def test_mypy_accepts_langgraph_style_calls_and_flags_bad_arguments(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), "--python-version", "3.11", str(sample)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    lines = SAMPLE.splitlines()
    bad = {i + 1 for i, line in enumerate(lines) if line.endswith("# BAD")}
    flagged = {int(m) for m in re.findall(r"sample\.py:(\d+): error", result.stdout)}
    assert flagged == bad, result.stdout


PUBLIC_MODULES = (
    "pregel/api.py", "pregel/_run.py", "pregel/state.py", "types.py", "config.py", "runtime.py",
    "typing.py", "errors.py", "constants.py", "_constants.py", "_running.py", "_updates.py",
    "_cache_key.py", "_logs.py", "channels/base.py",
)


def test_the_public_run_modules_type_check(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[3] / "src" / "stepgraph"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir",
         str(tmp_path / "cache"), "--python-version", "3.11",
         *(str(src / m) for m in PUBLIC_MODULES)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout
