"""Nested graphs with a checkpointer: interrupts in children and grandchildren, resume,
get_state(subgraphs=True), Send fan-out resume maps, and checkpointer=True children.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite). Expected outputs were
taken from LangGraph 1.2.22 run as an oracle (semantics §2.19, items 119, 121, 123).
"""

from __future__ import annotations

import asyncio
import operator
import re
import sqlite3
import uuid
from collections import Counter
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Send, interrupt


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    """A fresh checkpointer of each kind."""
    if request.param == "memory":
        yield InMemorySaver()
    else:
        from stepgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "x.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


class S(TypedDict):
    log: Annotated[list, operator.add]


class W(TypedDict):
    item: str
    log: Annotated[list, operator.add]


def cfg():
    """A config on a new, unique thread."""
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


def get_state(driver, app, config, **kw):
    if driver.is_async:
        return asyncio.run(app.aget_state(config, **kw))
    return app.get_state(config, **kw)


def _norm(ns):
    """Check every namespace segment is 'node:<task_id>' and replace the id by '<id>'."""
    out = []
    for seg in ns:
        m = re.match(r"^(\w+):[0-9a-f-]{36}$", seg)
        assert m, seg
        out.append(f"{m.group(1)}:<id>")
    return tuple(out)


def _asking_app(saver, calls, depth):
    """root: p1 -> child -> after; the child (depth 1) or grandchild (depth 2) runs before -> ask."""

    def before(s):
        calls.append("before")
        return {"log": ["before"]}

    def ask(s):
        calls.append("ask")
        return {"log": [f"ans={interrupt('q?')}"]}

    c = StateGraph(S)
    c.add_node("before", before)
    c.add_node("ask", ask)
    c.add_edge(START, "before")
    c.add_edge("before", "ask")
    inner = c.compile()
    if depth == 2:
        m = StateGraph(S)
        m.add_node("grandchild", inner)
        m.add_edge(START, "grandchild")
        inner = m.compile()
    p = StateGraph(S)
    p.add_node("p1", lambda s: {"log": ["p1"]})
    p.add_node("child", inner)
    p.add_node("after", lambda s: {"log": ["after"]})
    p.add_edge(START, "p1")
    p.add_edge("p1", "child")
    p.add_edge("child", "after")
    return p.compile(checkpointer=saver)


def test_interrupt_in_child_resumed_from_root(driver, saver):
    """A child's interrupt surfaces at the root; resume re-enters the child at its own checkpoint."""
    calls = []
    app, config = _asking_app(saver, calls, 1), cfg()
    out = driver.invoke(app, {"log": []}, config)
    assert out["log"] == ["p1"]
    assert [i.value for i in out["__interrupt__"]] == ["q?"]
    assert get_state(driver, app, config).next == ("child",)
    out = driver.invoke(app, Command(resume="yes"), config)
    assert out == {"log": ["p1", "p1", "before", "ans=yes", "after"]}
    assert calls == ["before", "ask", "ask"]
    assert get_state(driver, app, config).next == ()


def test_interrupt_in_grandchild_resumed_from_root(driver, saver):
    """An interrupt two levels down is resumed from the root without repeating earlier nodes."""
    calls = []
    app, config = _asking_app(saver, calls, 2), cfg()
    out = driver.invoke(app, {"log": []}, config)
    assert out["log"] == ["p1"]
    assert [i.value for i in out["__interrupt__"]] == ["q?"]
    out = driver.invoke(app, Command(resume="yes"), config)
    assert out == {"log": ["p1", "p1", "p1", "before", "ans=yes", "after"]}
    assert calls == ["before", "ask", "ask"]


def test_get_state_subgraphs_shows_interrupted_child(driver, saver):
    """get_state(subgraphs=True) puts the child's snapshot in tasks[i].state while interrupted."""
    app, config = _asking_app(saver, [], 1), cfg()
    driver.invoke(app, {"log": []}, config)
    plain = get_state(driver, app, config)
    assert [t.name for t in plain.tasks] == ["child"]
    assert isinstance(plain.tasks[0].state, dict)  # a config, not a snapshot
    assert [i.value for i in plain.tasks[0].interrupts] == ["q?"]
    snap = get_state(driver, app, config, subgraphs=True)
    child = snap.tasks[0].state
    assert child.values == {"log": ["p1", "before"]}
    assert child.next == ("ask",)
    assert _norm(child.config["configurable"]["checkpoint_ns"].split("|")) == ("child:<id>",)


def test_get_state_subgraphs_nests_grandchild(driver, saver):
    """With two levels the snapshots nest: root task -> child snapshot -> grandchild snapshot."""
    app, config = _asking_app(saver, [], 2), cfg()
    driver.invoke(app, {"log": []}, config)
    child = get_state(driver, app, config, subgraphs=True).tasks[0].state
    assert child.values == {"log": ["p1"]}
    assert child.next == ("grandchild",)
    grand = child.tasks[0].state
    assert child.tasks[0].name == "grandchild"
    assert grand.values == {"log": ["p1", "before"]}
    assert grand.next == ("ask",)


def test_stream_subgraphs_interrupt_and_resume(driver, saver):
    """The interrupt streams at the child ns and again at the root; resume streams the rest."""
    app, config = _asking_app(saver, [], 1), cfg()
    chunks = driver.stream(app, {"log": []}, config, subgraphs=True)
    shown = [(_norm(ns), c) for ns, c in chunks]
    assert shown[:2] == [
        ((), {"p1": {"log": ["p1"]}}),
        (("child:<id>",), {"before": {"log": ["before"]}}),
    ]
    assert [(ns, list(c)) for ns, c in shown[2:]] == [
        (("child:<id>",), ["__interrupt__"]),
        ((), ["__interrupt__"]),
    ]
    assert [i.value for i in shown[3][1]["__interrupt__"]] == ["q?"]
    chunks = driver.stream(app, Command(resume="ok"), config, subgraphs=True)
    assert [(_norm(ns), c) for ns, c in chunks] == [
        (("child:<id>",), {"ask": {"log": ["ans=ok"]}}),
        ((), {"child": {"log": ["p1", "before", "ans=ok"]}}),
        ((), {"after": {"log": ["after"]}}),
    ]


def _fanout_app(saver):
    def ask(s):
        return {"log": [f"{s['item']}={interrupt('q-' + s['item'])}"]}

    c = StateGraph(W)
    c.add_node("ask", ask)
    c.add_edge(START, "ask")
    p = StateGraph(S)
    p.add_node("child", c.compile())
    p.add_conditional_edges(
        START, lambda s: [Send("child", {"item": i, "log": []}) for i in ("a", "b")]
    )
    return p.compile(checkpointer=saver)


def test_send_fanout_children_interrupt_resume_map(driver, saver):
    """Two Send-spawned children interrupt; a {interrupt_id: value} map resumes each one."""
    app, config = _fanout_app(saver), cfg()
    out = driver.invoke(app, {"log": []}, config)
    ints = out["__interrupt__"]
    assert sorted(i.value for i in ints) == ["q-a", "q-b"]
    snap = get_state(driver, app, config, subgraphs=True)
    assert sorted((t.name, t.state.next, t.state.values["item"]) for t in snap.tasks) == [
        ("child", ("ask",), "a"),
        ("child", ("ask",), "b"),
    ]
    out = driver.invoke(app, Command(resume={i.id: i.value.upper() for i in ints}), config)
    assert out == {"log": ["a=Q-A", "b=Q-B"]}


def test_send_fanout_partial_resume_map(driver, saver):
    """Resuming only one of two child interrupts leaves the other pending."""
    app, config = _fanout_app(saver), cfg()
    ints = {i.value: i for i in driver.invoke(app, {"log": []}, config)["__interrupt__"]}
    out = driver.invoke(app, Command(resume={ints["q-a"].id: "x"}), config)
    assert out["log"] == ["a=x"]
    assert [i.value for i in out["__interrupt__"]] == ["q-b"]
    out = driver.invoke(app, Command(resume={ints["q-b"].id: "y"}), config)
    assert out == {"log": ["a=x", "b=y"]}


def _ns_counts(saver, config):
    tuples = saver.list({"configurable": {"thread_id": config["configurable"]["thread_id"]}})
    names = (
        re.sub(r":[0-9a-f-]{36}$", ":<id>", t.config["configurable"]["checkpoint_ns"])
        for t in tuples
    )
    return sorted(Counter(names).items())


def _one_child_app(saver, child_checkpointer):
    c = StateGraph(S)
    c.add_node("c1", lambda s: {"log": ["c1"]})
    c.add_edge(START, "c1")
    p = StateGraph(S)
    p.add_node("child", c.compile(checkpointer=child_checkpointer))
    p.add_edge(START, "child")
    return p.compile(checkpointer=saver)


def test_checkpointer_true_child_keeps_history(driver, saver):
    """A checkpointer=True child lives at ns 'child' and accumulates across parent runs."""
    app, config = _one_child_app(saver, True), cfg()
    assert driver.invoke(app, {"log": ["in"]}, config) == {"log": ["in", "in", "c1"]}
    assert driver.invoke(app, {"log": ["in2"]}, config) == {
        "log": ["in", "in", "c1", "in2", "in", "c1", "in", "in", "c1", "in2", "c1"]
    }
    assert _ns_counts(saver, config) == [("", 6), ("child", 6)]
    child_cfg = {"configurable": {**config["configurable"], "checkpoint_ns": "child"}}
    assert get_state(driver, app, child_cfg).values == {
        "log": ["in", "c1", "in", "in", "c1", "in2", "c1"]
    }


def test_default_child_checkpoints_per_task(driver, saver):
    """A default child checkpoints under 'child:<task_id>', a fresh namespace per parent step."""
    app, config = _one_child_app(saver, None), cfg()
    driver.invoke(app, {"log": ["in"]}, config)
    assert driver.invoke(app, {"log": ["in2"]}, config) == {
        "log": ["in", "in", "c1", "in2", "in", "in", "c1", "in2", "c1"]
    }
    assert _ns_counts(saver, config) == [("", 6), ("child:<id>", 6)]
