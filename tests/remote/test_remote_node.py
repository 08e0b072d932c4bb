"""RemoteGraph as a node of a local parent graph, against each server of ``remote_url``.

The parent (``pre -> remote -> post``) runs with an ``InMemorySaver``; its thread is the
remote thread. Results are compared with the same parent using the local graph as the
node (``examples/server_graphs.py``).
"""

from __future__ import annotations

import operator
import uuid
from types import ModuleType
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.errors import StepgraphError
from stepgraph.graph import END, START, StateGraph
from stepgraph.pregel.remote import RemoteException, RemoteGraph
from stepgraph.types import Command, Interrupt


class ParentState(TypedDict, total=False):
    value: str
    steps: Annotated[list[str], operator.add]


def _pre(state: ParentState) -> dict[str, Any]:
    return {"value": state["value"] + "<", "steps": ["pre"]}


def _post(state: ParentState) -> dict[str, Any]:
    return {"value": state["value"] + ">", "steps": ["post"]}


def parent(node: Any, *, checkpointer: bool = True) -> Any:
    """``pre -> remote -> post`` with ``node`` (a RemoteGraph or a local graph) as ``remote``."""
    return (
        StateGraph(ParentState)
        .add_node("pre", _pre)
        .add_node("remote", node)
        .add_node("post", _post)
        .add_edge(START, "pre")
        .add_edge("pre", "remote")
        .add_edge("remote", "post")
        .add_edge("post", END)
        .compile(checkpointer=InMemorySaver() if checkpointer else None)
    )


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def names(ns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(seg.split(":", 1)[0] for seg in ns)


def values_of(parts: list[Any]) -> list[Any]:
    """Stream parts with namespaces reduced to node names (task ids are each server's own)."""
    return [(names(p[0]), *p[1:]) for p in parts]


def test_remote_node_matches_local_subgraph_node(remote_url: str, graphs: ModuleType) -> None:
    remote_parent = parent(RemoteGraph("nested", url=remote_url))
    local_parent = parent(graphs.nested)
    cfg = thread()
    out = remote_parent.invoke({"value": "x"}, cfg)
    assert out == local_parent.invoke({"value": "x"}, thread()) == {
        "value": "x<p12f>", "steps": ["pre", "pre", "prep", "finish", "post"]}
    assert remote_parent.get_state(cfg).next == ()
    # the parent's thread is the remote thread
    remote_state = RemoteGraph("nested", url=remote_url).get_state(cfg)
    assert remote_state.values == {"value": "x<p12f", "steps": ["pre", "prep", "finish"]}


def test_remote_events_stream_under_the_caller_namespace(remote_url: str, graphs: ModuleType) -> None:
    remote_parent = parent(RemoteGraph("nested", url=remote_url))
    got = list(remote_parent.stream({"value": "x"}, thread(), stream_mode="updates", subgraphs=True))
    want = list(parent(graphs.nested).stream({"value": "x"}, thread(), stream_mode="updates",
                                             subgraphs=True))
    assert values_of(got) == values_of(want)
    assert (("remote", "child"), {"child_1": {"value": "x<p1"}}) in values_of(got)
    tops = {p[0][0] for p in got if p[0]}
    assert len(tops) == 1 and next(iter(tops)).startswith("remote:")
    # without subgraphs=True the parent streams only its own updates
    got = list(remote_parent.stream({"value": "x"}, thread(), stream_mode="updates"))
    assert [list(p) for p in got] == [["pre"], ["remote"], ["post"]]

    simple_parent = parent(RemoteGraph("simple", url=remote_url))
    modes = ["custom", "values"]
    got = list(simple_parent.stream({"value": "x"}, thread(), stream_mode=modes, subgraphs=True))
    want = list(parent(graphs.simple).stream({"value": "x"}, thread(), stream_mode=modes,
                                             subgraphs=True))
    assert values_of(got) == values_of(want)
    assert (("remote",), "custom", {"node": "a", "value": "x<"}) in values_of(got)


def test_remote_interrupt_is_the_parents_and_resume_is_forwarded(
    remote_url: str, graphs: ModuleType,
) -> None:
    remote_parent = parent(RemoteGraph("interrupt", url=remote_url))
    local_parent = parent(graphs.interrupt_graph)
    cfg, lcfg = thread(), thread()
    out = remote_parent.invoke({"value": "x"}, cfg)
    local_out = local_parent.invoke({"value": "x"}, lcfg)
    (intr,) = out["__interrupt__"]
    assert isinstance(intr, Interrupt)
    assert intr.value == local_out["__interrupt__"][0].value == {"question": "approve?", "value": "x<"}
    assert {k: v for k, v in out.items() if k != "__interrupt__"} == {"value": "x<", "steps": ["pre"]}

    state = remote_parent.get_state(cfg)
    assert state.next == ("remote",) and state.interrupts == (intr,)
    remote = RemoteGraph("interrupt", url=remote_url)
    assert remote.get_state(cfg).interrupts == (intr,)  # the remote thread is waiting

    # continuing without a resume value leaves the remote run paused (no restart)
    again = remote_parent.invoke(None, cfg)
    assert again["__interrupt__"] == [intr]

    final = remote_parent.invoke(Command(resume="yes"), cfg)
    assert final == local_parent.invoke(Command(resume="yes"), lcfg) == {
        "value": "x<|yes>", "steps": ["pre", "pre", "ask", "after", "post"]}
    done = remote.get_state(cfg)
    assert done.next == () and done.values["answer"] == "yes"
    assert remote_parent.get_state(cfg).next == ()


async def test_async_parent_resumes_by_interrupt_id(remote_url: str) -> None:
    remote_parent = parent(RemoteGraph("interrupt", url=remote_url))
    cfg = thread()
    out = await remote_parent.ainvoke({"value": "y"}, cfg)
    (intr,) = out["__interrupt__"]
    parts = [p async for p in remote_parent.astream(Command(resume={intr.id: "ok"}), cfg,
                                                    stream_mode="updates", subgraphs=True)]
    assert values_of(parts) == [
        (("remote",), {"ask": {"answer": "ok", "steps": ["ask"]}}),
        (("remote",), {"after": {"value": "y<|ok", "steps": ["after"]}}),
        ((), {"remote": {"value": "y<|ok", "steps": ["pre", "ask", "after"]}}),
        ((), {"post": {"value": "y<|ok>", "steps": ["post"]}}),
    ]
    assert (await remote_parent.aget_state(cfg)).values["value"] == "y<|ok>"


def test_nested_remote_interrupt_resumes_through_the_parent(remote_url: str) -> None:
    remote_parent = parent(RemoteGraph("nested_interrupt", url=remote_url))
    cfg = thread()
    out = remote_parent.invoke({"value": "x"}, cfg)
    assert [i.value for i in out["__interrupt__"]] == [{"question": "inner?"}]
    assert remote_parent.invoke(Command(resume="ok"), cfg) == {
        "value": "x<p[ok]>", "steps": ["pre", "pre", "prep", "post"]}


def test_parent_without_checkpointer_runs_statelessly(remote_url: str, graphs: ModuleType) -> None:
    out = parent(RemoteGraph("simple", url=remote_url), checkpointer=False).invoke({"value": "q"})
    assert out == parent(graphs.simple, checkpointer=False).invoke({"value": "q"}) == {
        "value": "q<ab>", "steps": ["pre", "pre", "a", "b", "post"]}
    with pytest.raises(StepgraphError) as info:
        parent(RemoteGraph("interrupt", url=remote_url), checkpointer=False).invoke({"value": "q"})
    assert info.value.code == "SG320"


def test_remote_error_fails_the_parent(remote_url: str) -> None:
    with pytest.raises(RemoteException) as info:
        parent(RemoteGraph("fail", url=remote_url)).invoke({"value": "x"}, thread())
    assert info.value.error == "ValueError" and info.value.message == "boom: x<"


def test_remote_node_inside_a_local_subgraph(remote_url: str) -> None:
    mid = (
        StateGraph(ParentState)
        .add_node("remote", RemoteGraph("interrupt", url=remote_url))
        .add_edge(START, "remote")
        .compile()
    )
    top = StateGraph(ParentState).add_node("mid", mid).add_edge(START, "mid").compile(
        checkpointer=InMemorySaver())
    cfg = thread()
    (intr,) = top.invoke({"value": "x"}, cfg)["__interrupt__"]
    assert top.get_state(cfg, subgraphs=True).tasks[0].state.next == ("remote",)
    parts = list(top.stream(Command(resume="deep"), cfg, stream_mode="updates", subgraphs=True))
    assert values_of(parts)[0] == (("mid", "remote"), {"ask": {"answer": "deep", "steps": ["ask"]}})
    assert parts[-1] == ((), {"mid": {"value": "x|deep", "steps": ["ask", "after"]}})
