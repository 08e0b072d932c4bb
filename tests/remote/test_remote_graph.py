"""RemoteGraph used directly, against each server of ``remote_url``, compared with running
the same graphs locally (``examples/server_graphs.py``)."""

from __future__ import annotations

import uuid
from types import ModuleType
from typing import Any

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.pregel.remote import RemoteException, RemoteGraph
from stepgraph.types import Command, Interrupt, PregelTask, StateSnapshot


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def saved(graphs: ModuleType, name: str) -> Any:
    """The example graph compiled with an in-memory checkpointer (the server's role)."""
    return getattr(graphs, name).builder.compile(checkpointer=InMemorySaver())


def norm(value: Any) -> Any:
    """Comparable across servers: task ids dropped from namespaces, interrupts by value."""
    if isinstance(value, Interrupt):
        return ("Interrupt", norm(value.value))
    if isinstance(value, PregelTask):  # task ids are each server's own
        return ("PregelTask", *norm(tuple(value)[1:]))
    if isinstance(value, tuple) and value and all(isinstance(s, str) and ":" in s for s in value):
        return tuple(s.split(":", 1)[0] for s in value)
    if isinstance(value, (list, tuple)):
        return (list if isinstance(value, list) else tuple)(norm(v) for v in value)
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    return value


def parts_of(got: list[Any]) -> list[Any]:
    """Several-mode parts without their event id: the SDK's ``(mode, payload, event_id)``
    parts RemoteGraph yields, as the ``(mode, payload)`` a local graph yields."""
    return [p[:2] if isinstance(p, tuple) and len(p) == 3 else p for p in got]


def test_invoke_and_stream_simple_match_local(remote_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("simple", url=remote_url)
    local = graphs.simple
    assert remote.invoke({"value": "x"}) == local.invoke({"value": "x"}) == {
        "value": "xab", "steps": ["a", "b"]}
    for mode in ("values", ["values", "updates", "custom"], None):
        got = list(remote.stream({"value": "x"}, stream_mode=mode))
        assert parts_of(got) == list(local.stream({"value": "x"}, stream_mode=mode)), mode
        if isinstance(mode, list):
            assert all(len(p) == 3 and p[2] is None or isinstance(p[2], str) for p in got)
    got = list(remote.stream({"value": "y"}, thread(), stream_mode=["updates"], version="v2"))
    assert got == list(local.stream({"value": "y"}, stream_mode=["updates"], version="v2"))
    assert got[0] == {"type": "updates", "ns": (), "data": {"a": {"value": "ya", "steps": ["a"]}}}


def test_stream_nested_subgraphs_matches_local(remote_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("nested", url=remote_url)
    local = graphs.nested
    got = list(remote.stream({"value": "x"}, stream_mode=["values", "updates"], subgraphs=True))
    want = list(local.stream({"value": "x"}, stream_mode=["values", "updates"], subgraphs=True))
    assert norm(got) == norm(want)
    assert (("child",), "updates", {"child_1": {"value": "xp1"}}) in norm(got)
    child_ns = {ns for ns, _, _ in got if ns}
    assert len(child_ns) == 1 and next(iter(child_ns))[0].startswith("child:")
    got = list(remote.stream({"value": "x"}, stream_mode="updates", subgraphs=True))
    assert norm(got) == norm(list(local.stream({"value": "x"}, stream_mode="updates",
                                               subgraphs=True)))
    # without subgraphs=True no namespaced part arrives
    assert list(remote.stream({"value": "x"})) == list(local.stream({"value": "x"}))


def test_state_history_and_update_state(remote_url: str, graphs: ModuleType) -> None:
    remote, local = RemoteGraph("simple", url=remote_url), saved(graphs, "simple")
    rcfg, lcfg = thread(), thread()
    remote.invoke({"value": "x"}, rcfg)
    local.invoke({"value": "x"}, lcfg)

    state = remote.get_state(rcfg)
    want = local.get_state(lcfg)
    assert isinstance(state, StateSnapshot)
    assert (state.values, state.next, state.tasks) == (want.values, want.next, want.tasks)
    assert state.config["configurable"]["thread_id"] == rcfg["configurable"]["thread_id"]
    assert state.config["configurable"]["checkpoint_id"]
    assert state.parent_config is not None
    assert (state.metadata["step"], state.metadata["source"]) == (2, "loop")

    def summary(snaps: Any) -> list[Any]:
        return [(s.metadata["step"], s.metadata["source"], s.next, s.values) for s in snaps]

    history = list(remote.get_state_history(rcfg))
    assert summary(history) == summary(local.get_state_history(lcfg))
    assert [s.metadata["step"] for s in history] == [2, 1, 0, -1]
    assert summary(remote.get_state_history(rcfg, limit=2)) == summary(history[:2])
    assert summary(remote.get_state_history(rcfg, before=history[1].config)) == summary(history[2:])
    paged = remote.copy(history_page_size=1)
    assert summary(paged.get_state_history(rcfg)) == summary(history)
    assert summary(paged.get_state_history(rcfg, limit=3)) == summary(history[:3])

    new_config = remote.update_state(rcfg, {"value": "edited"}, as_node="b")
    local.update_state(lcfg, {"value": "edited"}, as_node="b")
    assert new_config["configurable"]["checkpoint_id"] != state.config["configurable"]["checkpoint_id"]
    updated = remote.get_state(rcfg)
    assert updated.values == local.get_state(lcfg).values == {"value": "edited", "steps": ["a", "b"]}
    assert updated.metadata["source"] == "update"
    assert updated.config["configurable"]["checkpoint_id"] == new_config["configurable"]["checkpoint_id"]
    at_old = remote.get_state(history[1].config)
    assert at_old.values == history[1].values and at_old.next == ("b",)


def test_interrupt_and_resume_directly(remote_url: str, graphs: ModuleType) -> None:
    remote, local = RemoteGraph("interrupt", url=remote_url), saved(graphs, "interrupt_graph")
    rcfg, lcfg = thread(), thread()
    out = remote.invoke({"value": "x"}, rcfg)
    assert norm(out) == norm(local.invoke({"value": "x"}, lcfg))
    (intr,) = out["__interrupt__"]
    assert isinstance(intr, Interrupt) and intr.value == {"question": "approve?", "value": "x"}
    assert len(intr.id) == 32

    state = remote.get_state(rcfg)
    assert state.next == ("ask",) and state.interrupts == (intr,)
    (task,) = state.tasks
    assert isinstance(task, PregelTask) and task.name == "ask" and task.interrupts == (intr,)
    assert norm(state.tasks) == norm(local.get_state(lcfg).tasks)

    final = remote.invoke(Command(resume="yes"), rcfg)
    assert final == local.invoke(Command(resume="yes"), lcfg) == {
        "value": "x|yes", "answer": "yes", "steps": ["ask", "after"]}
    assert remote.get_state(rcfg).next == ()

    rcfg, lcfg = thread(), thread()
    got = parts_of(list(remote.stream({"value": "x"}, rcfg, stream_mode=["values", "updates"])))
    assert norm(got) == norm(list(local.stream({"value": "x"}, lcfg,
                                               stream_mode=["values", "updates"])))
    got = list(remote.stream(Command(resume="no"), rcfg,
                             stream_mode="updates"))
    assert got[-1] == {"after": {"value": "x|no", "steps": ["after"]}}


def test_nested_interrupt_state_with_subgraphs(remote_url: str) -> None:
    remote = RemoteGraph("nested_interrupt", url=remote_url)
    cfg = thread()
    out = remote.invoke({"value": "x"}, cfg)
    assert [i.value for i in out["__interrupt__"]] == [{"question": "inner?"}]
    state = remote.get_state(cfg, subgraphs=True)
    assert state.next == ("inner",)
    inner = state.tasks[0].state
    assert isinstance(inner, StateSnapshot)
    assert inner.next == ("gate",) and inner.values == {"value": "xp"}
    assert remote.invoke(Command(resume="ok"), cfg) == {"value": "xp[ok]", "steps": ["prep"]}


def test_error_event_raises_remote_exception(remote_url: str) -> None:
    with pytest.raises(RemoteException) as info:
        RemoteGraph("fail", url=remote_url).invoke({"value": "x"})
    assert info.value.error == "ValueError" and info.value.message == "boom: x"


def test_get_graph_matches_local(remote_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("nested", url=remote_url)
    for xray in (False, True):
        got, want = remote.get_graph(xray=xray), graphs.nested.get_graph(xray=xray)
        assert set(got.nodes) == set(want.nodes), xray
        assert {(e.source, e.target) for e in got.edges} == {
            (e.source, e.target) for e in want.edges}
    assert "child:child_1" in remote.get_graph(xray=True).nodes


async def test_async_api(remote_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("simple", url=remote_url)
    cfg = thread()
    assert await remote.ainvoke({"value": "z"}, cfg) == {"value": "zab", "steps": ["a", "b"]}
    parts = [p async for p in remote.astream({"value": "x"}, stream_mode=["updates", "custom"])]
    assert parts_of(parts) == list(graphs.simple.stream({"value": "x"}, stream_mode=["updates", "custom"]))
    state = await remote.aget_state(cfg)
    assert state.values == {"value": "zab", "steps": ["a", "b"]}
    history = [s async for s in remote.aget_state_history(cfg)]
    assert [s.metadata["step"] for s in history] == [2, 1, 0, -1]
    await remote.aupdate_state(cfg, {"value": "q"}, as_node="b")
    assert (await remote.aget_state(cfg)).values["value"] == "q"
    assert "a" in (await remote.aget_graph()).nodes
    only_sync = RemoteGraph("simple", sync_client=remote.sync_client)
    assert await only_sync.ainvoke({"value": "s"}) == {"value": "sab", "steps": ["a", "b"]}


def test_messages_stream_yields_chunk_metadata_tuples(remote_url: str) -> None:
    remote = RemoteGraph("chat", url=remote_url)
    parts = list(remote.stream({"messages": [{"role": "user", "content": "hi"}]},
                               stream_mode="messages"))
    assert parts and all(isinstance(p, tuple) and len(p) == 2 for p in parts)
    assert "".join(chunk["content"] for chunk, _ in parts) == "hello from chat"
    assert {meta["langgraph_node"] for _, meta in parts} == {"respond"}
