"""Without the alias, the real LangGraph and stepgraph in one process: what works, and the
clear error where they cannot mix. (Each case runs in a fresh interpreter: this folder's
conftest has the alias installed.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from compat_support import HAVE_LANGCHAIN, SKIP_REASON

pytestmark = pytest.mark.skipif(not HAVE_LANGCHAIN, reason=SKIP_REASON)

PRELUDE = """
from typing_extensions import TypedDict
import langgraph.graph as lg
import stepgraph.graph as sg

class S(TypedDict, total=False):
    x: int
"""


def _run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "STEPGRAPH_LANGGRAPH_ALIAS"}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_real_langgraph_checkpointer_is_sg613() -> None:
    out = _run("""
        from langgraph.checkpoint.memory import InMemorySaver
        from stepgraph.errors import ForeignGraphError
        b = sg.StateGraph(S); b.add_node("n", lambda s: {"x": 2}); b.add_edge(sg.START, "n")
        try:
            b.compile(checkpointer=InMemorySaver())
        except ForeignGraphError as exc:
            print(exc.code, isinstance(exc, TypeError))
    """)
    assert out == "SG613 True"


def test_a_langgraph_subgraph_reaches_the_stepgraph_store() -> None:
    """LangGraph's ``get_store()`` inside a stepgraph run reads ``__pregel_runtime`` from the
    task config (it used to be ``KeyError: '__pregel_runtime'``)."""
    out = _run("""
        from langgraph.config import get_store
        from stepgraph.store.memory import InMemoryStore

        def inner(state):
            get_store().put(("ns",), "k", {"x": state["x"]})
            return {"x": state["x"] + 1}

        b = lg.StateGraph(S); b.add_node("i", inner); b.add_edge(lg.START, "i")
        o = sg.StateGraph(S); o.add_node("sub", b.compile()); o.add_edge(sg.START, "sub")
        store = InMemoryStore()
        print(o.compile(store=store).invoke({"x": 1}), store.get(("ns",), "k").value)
    """)
    assert out == "{'x': 2} {'x': 1}"
