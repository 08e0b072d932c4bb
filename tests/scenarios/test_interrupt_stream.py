"""What a run streams when it stops on an interrupt: each interrupt when its task stops
(``updates`` and ``values`` with the interrupt), the finished tasks' writes as a last
``values`` event, one empty ``__interrupt__`` update from the root for a breakpoint (a
subgraph's included); and, on resume, the saved results of tasks that are not rerun
marked ``cached``. Parallel tasks stream as each finishes.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.types import interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    k: Annotated[str, operator.add]


def _drop_ids(chunks):
    out = []
    for chunk in chunks:
        if isinstance(chunk, dict) and chunk.get("__interrupt__"):
            chunk = {**chunk, "__interrupt__": [i.value for i in chunk["__interrupt__"]]}
        out.append(chunk)
    return out


def _ask(s):
    interrupt("x")
    return {"k": "b"}


def test_values_at_an_interrupt(driver, saver):
    g = StateGraph(S)
    g.add_node("a", lambda s: {"k": "a"})
    g.add_node("b", _ask)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile(checkpointer=saver)
    chunks = driver.stream(app, {"k": ""}, cfg(), stream_mode="values")
    assert _drop_ids(chunks) == [{"k": ""}, {"k": "", "__interrupt__": ["x"]}, {"k": "a"}]


def test_values_and_updates_at_a_breakpoint(driver, saver):
    g = StateGraph(S)
    g.add_node("a", lambda s: {"k": "a"})
    g.add_node("b", lambda s: {"k": "b"})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=saver, interrupt_before=["b"])
    assert driver.stream(app, {"k": ""}, cfg(), stream_mode="values") == [{"k": ""}, {"k": "a"}]
    assert driver.stream(app, {"k": ""}, cfg(), stream_mode=["values", "updates"]) == [
        ("values", {"k": ""}),
        ("updates", {"a": {"k": "a"}}),
        ("values", {"k": "a"}),
        ("updates", {"__interrupt__": ()}),
    ]


def _parallel_with_paused_subgraph(saver):
    def slow(s):
        time.sleep(0.2)
        return {"k": "in1"}

    inner = StateGraph(S)
    inner.add_node("in1", slow)
    inner.add_node("in2", lambda s: {"k": "in2"})
    inner.add_edge(START, "in1")
    inner.add_edge("in1", "in2")
    g = StateGraph(S)
    g.add_node("inner", inner.compile(interrupt_before=["in2"]))
    g.add_node("fast", lambda s: {"k": "fast"})
    g.add_node("last", lambda s: {"k": "last"})
    g.add_edge(START, "inner")
    g.add_edge(START, "fast")
    g.add_edge(["inner", "fast"], "last")
    return g.compile(checkpointer=saver)


def test_subgraph_breakpoint_beside_a_parallel_node(driver, saver):
    app = _parallel_with_paused_subgraph(saver)
    c = cfg()
    chunks = driver.stream(app, {"k": ""}, c, subgraphs=True)
    assert [(tuple(n.split(":")[0] for n in ns), ch) for ns, ch in chunks] == [
        ((), {"fast": {"k": "fast"}}),
        (("inner",), {"in1": {"k": "in1"}}),
        ((), {"__interrupt__": ()}),
    ]
    assert driver.stream(app, None, c) == [
        {"fast": {"k": "fast"}, "__metadata__": {"cached": True}},
        {"inner": {"k": "in1in2"}},
        {"last": {"k": "last"}},
    ]
    c = cfg()
    assert driver.stream(app, {"k": ""}, c, stream_mode="values") == [{"k": ""}, {"k": "fast"}]
    assert driver.stream(app, None, c, stream_mode="values") == [
        {"k": ""}, {"k": "fastin1in2"}, {"k": "fastin1in2last"},
    ]
