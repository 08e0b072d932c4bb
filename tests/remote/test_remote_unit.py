"""RemoteGraph without a server: construction, clients, config and state conversion."""

from __future__ import annotations

import sys

import pytest

from stepgraph.errors import StepgraphError
from stepgraph.pregel.remote import RemoteException, RemoteGraph
from stepgraph.remote.events import command_json, wire_modes
from stepgraph.remote.wire import (
    config_of,
    decode_payload,
    graph_of,
    snapshot_of,
    split_event,
    wire_config,
)
from stepgraph.types import Command, Interrupt, PregelTask, Send, StateSnapshot

URL = "http://127.0.0.1:9"  # never contacted by these tests


def test_no_url_and_no_client_fails_at_construction() -> None:
    with pytest.raises(ValueError) as info:
        RemoteGraph("simple")
    assert isinstance(info.value, StepgraphError)
    assert info.value.code == "SG502"
    assert "url" in str(info.value)


def test_missing_sdk_is_a_coded_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph_sdk", None)
    with pytest.raises(ImportError) as info:
        RemoteGraph("simple", url=URL)
    assert info.value.code == "SG501"  # type: ignore[attr-defined]
    assert "pip install 'stepgraph[remote]'" in str(info.value)


def test_name_defaults_to_graph_id_and_clients_are_built() -> None:
    pytest.importorskip("langgraph_sdk")
    remote = RemoteGraph("simple", url=URL)
    assert remote.name == "simple" and remote.assistant_id == "simple"
    assert remote.client is not None and remote.sync_client is not None
    assert RemoteGraph("simple", url=URL, name="r").name == "r"


def test_api_key_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langgraph_sdk")
    for name in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANGSMITH_API_KEY", "from-env")
    remote = RemoteGraph("simple", url=URL, headers={"x-extra": "1"})
    headers = remote.sync_client.http.client.headers
    assert headers["x-api-key"] == "from-env" and headers["x-extra"] == "1"
    monkeypatch.setenv("LANGGRAPH_API_KEY", "first")
    assert RemoteGraph("simple", url=URL).client.http.client.headers["x-api-key"] == "first"
    explicit = RemoteGraph("simple", url=URL, api_key="given")
    assert explicit.sync_client.http.client.headers["x-api-key"] == "given"


async def test_missing_sync_or_async_client_is_a_clear_error() -> None:
    only_sync = RemoteGraph("simple", sync_client=object())
    only_async = RemoteGraph("simple", client=object())
    with pytest.raises(ValueError, match="async client") as info:
        await only_sync.aget_graph()
    assert info.value.code == "SG503"
    with pytest.raises(ValueError, match="sync client"):
        list(only_async.stream({"value": "x"}))
    with pytest.raises(ValueError, match="thread_id") as info:
        only_sync.get_state({"configurable": {}})
    assert info.value.code == "SG504"
    with pytest.raises(NotImplementedError):
        only_sync.bulk_update_state({}, [])


def test_with_config_and_copy_share_clients() -> None:
    client = object()
    remote = RemoteGraph("simple", sync_client=client, config={"tags": ["a"]})
    other = remote.with_config({"configurable": {"k": 1}}, recursion_limit=5)
    assert other.sync_client is client and other is not remote
    assert other.config["configurable"] == {"k": 1} and other.config["recursion_limit"] == 5
    assert other.config["tags"] == ["a"] and remote.config == {"tags": ["a"]}
    renamed = remote.copy({"name": "x"})
    assert renamed.name == "x" and remote.name == "simple"
    with pytest.raises(TypeError):
        remote.copy(nope=1)


def test_usable_as_a_node_name() -> None:
    from stepgraph.graph import START, StateGraph

    remote = RemoteGraph("simple", sync_client=object(), name="far")
    builder = StateGraph(dict).add_node(remote).add_edge(START, "far")
    assert "far" in builder.nodes


def test_wire_config_keeps_only_json_and_drops_checkpoint_keys() -> None:
    config = {
        "configurable": {
            "thread_id": "t", "checkpoint_ns": "a:1", "checkpoint_id": "c", "checkpoint_map": {},
            "__pregel_resuming": True, "user": 1, "obj": object(), "nested": {"x": (1, 2)},
        },
        "metadata": {"langgraph_triggers": ("branch:to:x",), "fn": len},
        "tags": ["t1", 3], "recursion_limit": 7, "callbacks": [object()],
    }
    assert wire_config(config) == {
        "configurable": {"user": 1, "nested": {"x": [1, 2]}},
        "metadata": {"langgraph_triggers": ["branch:to:x"]},
        "tags": ["t1"],
        "recursion_limit": 7,
    }


def test_wire_modes_and_commands() -> None:
    assert wire_modes(["values"], None) == ["values", "updates"]
    assert wire_modes(["messages", "events", "updates"], None) == ["messages-tuple", "updates"]
    assert command_json(Command(resume="yes")) == {"resume": "yes"}
    assert command_json(Command(update={"a": 1}, goto=Send("n", {"x": 1}))) == {
        "update": {"a": 1}, "goto": [{"node": "n", "input": {"x": 1}}],
    }


def test_event_payloads_take_local_shapes() -> None:
    assert split_event("updates|outer:1|inner:2") == ("updates", ("outer:1", "inner:2"))
    assert split_event("values") == ("values", ())
    wire = {"__interrupt__": [{"value": 1, "id": "a" * 32, "response_schema": None}]}
    assert decode_payload("updates", wire) == {"__interrupt__": (Interrupt(1, "a" * 32),)}
    assert decode_payload("messages", [{"content": "hi"}, {"m": 1}]) == ({"content": "hi"}, {"m": 1})


def test_thread_state_becomes_a_state_snapshot() -> None:
    ckpt = {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c2", "checkpoint_map": None}
    inner = {
        "values": {"value": "xp"}, "next": ["gate"], "tasks": [], "metadata": {"step": 1},
        "created_at": "now", "checkpoint": {**ckpt, "checkpoint_ns": "inner:1"},
        "parent_checkpoint": None, "interrupts": [],
    }
    state = {
        "values": {"value": "xp"}, "next": ["inner"], "metadata": {"step": 1},
        "created_at": "now", "checkpoint": ckpt,
        "parent_checkpoint": {**ckpt, "checkpoint_id": "c1"},
        "tasks": [{"id": "1", "name": "inner", "path": ["__pregel_pull", "inner"],
                   "error": None, "interrupts": [{"id": "i" * 32, "value": {"q": 1}}],
                   "checkpoint": None, "state": inner, "result": None}],
        "interrupts": [{"id": "i" * 32, "value": {"q": 1}}],
    }
    snap = snapshot_of(state)
    assert isinstance(snap, StateSnapshot)
    assert snap.next == ("inner",)
    assert snap.config == {"configurable": {"thread_id": "t", "checkpoint_ns": "",
                                            "checkpoint_id": "c2", "checkpoint_map": {}}}
    assert snap.parent_config["configurable"]["checkpoint_id"] == "c1"
    task = snap.tasks[0]
    assert isinstance(task, PregelTask) and task.path == ("__pregel_pull", "inner")
    assert task.interrupts == (Interrupt({"q": 1}, "i" * 32),)
    assert isinstance(task.state, StateSnapshot) and task.state.next == ("gate",)
    assert snap.interrupts == task.interrupts
    empty = snapshot_of({"values": {}, "next": [], "tasks": [], "checkpoint": None,
                         "metadata": None, "parent_checkpoint": None}, "t9")
    assert empty.values == {} and empty.config == {"configurable": {"thread_id": "t9"}}
    assert config_of(None) is None


def test_graph_json_becomes_a_drawable_graph() -> None:
    graph = graph_of({
        "nodes": [{"id": "__start__", "type": "runnable", "data": {"name": "__start__"}},
                  {"id": "a", "type": "runnable", "data": {"name": "a"}}, {"id": "__end__"}],
        "edges": [{"source": "__start__", "target": "a"},
                  {"source": "a", "target": "__end__", "conditional": True}],
    })
    assert list(graph.nodes) == ["__start__", "a", "__end__"]
    assert [(e.source, e.target, e.conditional) for e in graph.edges] == [
        ("__start__", "a", False), ("a", "__end__", True)]
    assert "a" in graph.draw_mermaid()


def test_remote_exception_carries_the_error_event() -> None:
    exc = RemoteException({"error": "ValueError", "message": "boom: x"})
    assert exc.args[0] == {"error": "ValueError", "message": "boom: x"}
    assert exc.error == "ValueError" and exc.message == "boom: x"
    assert "ValueError: boom: x" in str(exc) and exc.code == "SG510"


class _Part:
    def __init__(self, event: str, data: object, id: str | None = None) -> None:
        self.event, self.data, self.id = event, data, id


class _Runs:
    """A recording stand-in for the SDK's ``runs`` (sync and async ``stream``)."""

    def __init__(self, parts: list[_Part]) -> None:
        self.parts = parts
        self.calls: list[dict] = []

    def stream(self, **kwargs: object):  # type: ignore[no-untyped-def]
        self.calls.append(kwargs)
        return iter(self.parts)


class _Client:
    def __init__(self, parts: list[_Part]) -> None:
        self.runs = _Runs(parts)


def test_run_requests_name_the_thread_and_pass_headers_and_sdk_options() -> None:
    client = _Client([_Part("values", {"v": 1})])
    remote = RemoteGraph("g", sync_client=client)
    remote.invoke({"v": 0}, {"configurable": {"thread_id": "t1", "k": 2}},
                  headers={"x-a": "1"}, multitask_strategy="enqueue")
    [call] = client.runs.calls
    assert call["thread_id"] == "t1" and call["assistant_id"] == "g"
    assert call["config"]["configurable"] == {"k": 2} and call["context"] is None
    assert call["headers"] == {"x-a": "1"} and call["multitask_strategy"] == "enqueue"
    remote.invoke({"v": 0}, context={"user": "u"})
    assert client.runs.calls[-1]["context"] == {"user": "u"}
    assert client.runs.calls[-1]["headers"] is None
    with pytest.raises(TypeError, match="input"):
        remote.invoke({"v": 0}, input=1)


def test_distributed_tracing_adds_langsmith_headers() -> None:
    ls = pytest.importorskip("langsmith")
    from unittest.mock import MagicMock

    client = _Client([_Part("values", {"v": 1})])
    traced = RemoteGraph("g", sync_client=client, distributed_tracing=True)
    plain = RemoteGraph("g", sync_client=client)
    with ls.tracing_context(enabled=True, client=MagicMock()), ls.trace("caller"):
        traced.invoke({"v": 0}, headers={"baggage": "mine=1"})
        plain.invoke({"v": 0})
    with_tracing, without = client.runs.calls
    assert with_tracing["headers"]["langsmith-trace"]
    assert with_tracing["headers"]["baggage"].startswith("mine=1,langsmith-metadata=")
    assert without["headers"] is None
    traced.invoke({"v": 0})  # no current run tree: nothing added
    assert client.runs.calls[-1]["headers"] is None


def test_several_modes_yield_sdk_parts_and_a_nested_call_raises_interrupts() -> None:
    from stepgraph.errors import GraphInterrupt

    parts = [_Part("updates", {"a": 1}, "7"),
             _Part("updates", {"__interrupt__": [{"value": "q", "id": "i" * 32}]}, "8")]
    remote = RemoteGraph("g", sync_client=_Client(parts))
    got = list(remote.stream({}, stream_mode=["updates"]))
    assert got[0] == ("updates", {"a": 1}, "7")
    assert got[1][0] == "updates" and got[1][2] == "8"
    assert list(remote.stream({}, stream_mode="updates"))[0] == {"a": 1}
    with pytest.raises(GraphInterrupt) as info:
        list(remote.stream({}, {"configurable": {"checkpoint_ns": "caller:1"}}))
    assert info.value.args[0] == [Interrupt("q", "i" * 32)]
