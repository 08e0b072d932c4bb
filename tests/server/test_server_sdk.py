"""Main flows through the official ``langgraph_sdk`` client (sync and async)."""

from __future__ import annotations

import uuid

import pytest

SIMPLE_FINAL = {"value": "xab", "steps": ["a", "b"]}


def test_quickstart_sync(client) -> None:
    assistants = client.assistants.search(limit=100)
    assert {"simple", "nested", "chat"} <= {a["graph_id"] for a in assistants}
    thread = client.threads.create()
    parts = list(client.runs.stream(thread["thread_id"], "simple", input={"value": "x"}, stream_mode="values"))
    assert parts[0].event == "metadata" and parts[0].data["attempt"] == 1
    assert [p.data for p in parts[1:]] == [{"value": "x", "steps": []}, {"value": "xa", "steps": ["a"]}, SIMPLE_FINAL]
    got = client.threads.get(thread["thread_id"])
    assert got["status"] == "idle" and got["values"] == SIMPLE_FINAL
    run = client.runs.list(thread["thread_id"])[0]
    assert run["status"] == "success" and run["run_id"] == parts[0].data["run_id"]


def test_unknown_input_keys_are_ignored(client) -> None:
    out = client.runs.wait(None, "simple", input={"value": "x", "extra": 1, "another": [1, 2]})
    assert out == SIMPLE_FINAL


def test_interrupt_and_resume(client) -> None:
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "interrupt", input={"value": "x"})
    assert [i["value"] for i in out["__interrupt__"]] == [{"question": "approve?", "value": "x"}]
    thread = client.threads.get(tid)
    assert thread["status"] == "interrupted"
    assert [i["value"] for ints in thread["interrupts"].values() for i in ints] == [{"question": "approve?", "value": "x"}]
    state = client.threads.get_state(tid)
    assert state["next"] == ["ask"] and state["interrupts"][0]["id"] == out["__interrupt__"][0]["id"]
    final = client.runs.wait(tid, "interrupt", command={"resume": "yes"})
    assert final == {"value": "x|yes", "answer": "yes", "steps": ["ask", "after"]}
    assert client.threads.get(tid)["status"] == "idle"


def test_nested_stream_and_state(client) -> None:
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "nested_interrupt", input={"value": "x"}, stream_mode=["updates"],
                                    stream_subgraphs=True))
    sub = [p.event for p in parts if p.event.startswith("updates|inner:")]
    assert len(sub) == 1
    state = client.threads.get_state(tid, subgraphs=True)
    assert state["tasks"][0]["state"]["next"] == ["gate"]
    assert client.runs.wait(tid, "nested_interrupt", command={"resume": "ok"}) == {"value": "xp[ok]", "steps": ["prep"]}


def test_state_update_history_copy_delete(client) -> None:
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "simple", input={"value": "x"})
    res = client.threads.update_state(tid, {"value": "edited"}, as_node="b")
    assert res["checkpoint"]["thread_id"] == tid
    assert client.threads.get(tid)["values"]["value"] == "edited"
    hist = client.threads.get_history(tid, limit=10)
    assert [h["metadata"]["step"] for h in hist] == [3, 2, 1, 0, -1]
    older = client.threads.get_history(tid, limit=2, before={"checkpoint_id": hist[1]["checkpoint_id"]})
    assert [h["metadata"]["step"] for h in older] == [1, 0]
    copy = client.threads.copy(tid)
    assert client.threads.get_state(copy["thread_id"])["values"]["value"] == "edited"
    assert len(client.threads.get_history(copy["thread_id"])) == 5
    client.threads.delete(tid)
    with pytest.raises(Exception) as info:
        client.threads.get(tid)
    assert info.value.response.status_code == 404
    assert client.threads.get(copy["thread_id"])["thread_id"] == copy["thread_id"]


def test_assistants_crud_and_factory(client) -> None:
    a = client.assistants.create(graph_id="factory", config={"configurable": {"greeting": "hi"}},
                                 name="greeter", metadata={"team": "t"})
    assert a["context"] == {"greeting": "hi"}
    assert client.runs.wait(None, a["assistant_id"], input={})["steps"] == ["hi"]
    assert client.runs.wait(None, "factory", input={})["steps"] == ["hello"]
    assert client.assistants.count(graph_id="factory") == 2
    patched = client.assistants.update(a["assistant_id"], name="greeter2", metadata={"x": 1})
    assert patched["version"] == 2 and patched["metadata"] == {"team": "t", "x": 1}
    graph = client.assistants.get_graph(a["assistant_id"])
    assert {n["id"] for n in graph["nodes"]} == {"__start__", "greet", "__end__"}
    schemas = client.assistants.get_schemas(a["assistant_id"])
    assert set(schemas["state_schema"]["properties"]) == {"delay", "steps"}
    client.assistants.delete(a["assistant_id"])
    assert client.assistants.count(graph_id="factory") == 1


def test_store_roundtrip(client) -> None:
    ns = ["tests", uuid.uuid4().hex]
    client.store.put_item(ns, "k", {"a": 1})
    item = client.store.get_item(ns, "k")
    assert item["value"] == {"a": 1} and item["namespace"] == ns
    assert [i["key"] for i in client.store.search_items(ns)["items"]] == ["k"]
    assert ns in client.store.list_namespaces(prefix=ns[:1])["namespaces"]
    client.store.delete_item(ns, "k")
    assert client.store.get_item(ns, "k") is None


async def test_async_client(server) -> None:
    from langgraph_sdk import get_client

    ac = get_client(url=server.url, api_key=None)
    tid = (await ac.threads.create(metadata={"k": "async"}))["thread_id"]
    assert await ac.runs.wait(tid, "simple", input={"value": "x"}) == SIMPLE_FINAL
    names = [p.event async for p in ac.runs.stream(None, "nested", input={"value": "x"},
                                                    stream_mode=["updates", "values"], stream_subgraphs=True)]
    assert "updates|child" in {n.split(":")[0] for n in names}
    found = await ac.threads.search(metadata={"k": "async"})
    assert [t["thread_id"] for t in found] == [tid]
    tid = (await ac.threads.create())["thread_id"]
    run = await ac.runs.create(tid, "slow", input={"delay": 0.2, "value": "q"})
    assert await ac.runs.join(tid, run["run_id"]) == {"delay": 0.2, "value": "qz", "steps": ["nap"]}
    assert (await ac.runs.get(tid, run["run_id"]))["status"] == "success"
    chunks = [p async for p in ac.runs.stream(None, "chat", input={"messages": [{"role": "user", "content": "hi"}]},
                                               stream_mode="messages-tuple")]
    text = "".join(p.data[0]["content"] for p in chunks if p.event == "messages")
    assert text == "hello from chat"


def test_subgraph_messages_without_stream_subgraphs(client) -> None:
    body = {"input": {}, "stream_mode": ["messages-tuple", "updates"]}
    flat = list(client.runs.stream(None, "chat_in_subgraph", **body))
    assert [p.event for p in flat[1:]] == ["messages", "messages", "updates"]
    assert "".join(p.data[0]["content"] for p in flat if p.event == "messages") == "token"
    nested = list(client.runs.stream(None, "chat_in_subgraph", stream_subgraphs=True, **body))
    names = [p.event.split(":")[0] for p in nested[1:]]
    assert names == ["messages|sub", "messages|sub", "updates|sub", "updates"]
    parts = list(client.runs.stream(None, "chat_in_subgraph", input={}, stream_mode="messages"))
    assert [p.event for p in parts[1:]] == ["messages/metadata", "messages/partial", "messages/partial"]
    assert parts[-1].data[0]["content"] == "token" and parts[-1].data[0]["type"] == "ai"
