"""Assistant versions through ``langgraph_sdk``: every update keeps the old version, versions are
listed newest first and filtered by their metadata, ``set_latest`` brings one back."""

from __future__ import annotations

from typing import Any

import pytest


def test_every_update_keeps_the_old_version(client: Any) -> None:
    a = client.assistants.create("simple", config={"configurable": {"k": 1}}, metadata={"stage": "one"},
                                 name="v1")
    aid = a["assistant_id"]
    assert a["version"] == 1
    b = client.assistants.update(aid, config={"configurable": {"k": 2}}, metadata={"stage": "two"}, name="v2")
    c = client.assistants.update(aid, metadata={"stage": "three"})
    assert (b["version"], c["version"]) == (2, 3)
    versions = client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert [v["name"] for v in versions] == ["v2", "v2", "v1"]
    assert versions[2]["config"] == {"configurable": {"k": 1}} and versions[2]["metadata"] == {"stage": "one"}
    assert set(versions[0]) >= {"assistant_id", "graph_id", "config", "context", "metadata", "version",
                                "created_at", "name", "description"}
    assert [v["version"] for v in client.assistants.get_versions(aid, limit=1, offset=1)] == [2]
    assert [v["version"] for v in client.assistants.get_versions(aid, metadata={"stage": "two"})] == [2]
    assert client.assistants.get_versions(aid, metadata={"stage": "nope"}) == []


def test_set_latest_restores_a_version(client: Any) -> None:
    from langgraph_sdk.errors import NotFoundError

    a = client.assistants.create("simple", config={"configurable": {"k": "old"}}, name="old")
    aid = a["assistant_id"]
    client.assistants.update(aid, config={"configurable": {"k": "new"}}, name="new")
    back = client.assistants.set_latest(aid, 1)
    assert back["version"] == 1 and back["name"] == "old"
    assert back["config"] == {"configurable": {"k": "old"}} and back["context"] == {"k": "old"}
    assert client.assistants.get(aid)["name"] == "old"
    assert [v["version"] for v in client.assistants.get_versions(aid)] == [2, 1]  # no new version
    newer = client.assistants.update(aid, name="newest")  # the next update follows the highest version
    assert newer["version"] == 3
    with pytest.raises(NotFoundError):
        client.assistants.set_latest(aid, 9)


def test_runs_use_the_restored_version(client: Any) -> None:
    a = client.assistants.create("simple", name="runner")
    aid = a["assistant_id"]
    client.assistants.update(aid, graph_id="nested")
    assert client.assistants.get(aid)["graph_id"] == "nested"
    client.assistants.set_latest(aid, 1)
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], aid, input={"value": "x"})
    assert client.threads.get(thread["thread_id"])["metadata"]["graph_id"] == "simple"


def test_system_assistant_versions_and_delete(client: Any, http: Any) -> None:
    from stepgraph.server.util import system_assistant_id

    aid = system_assistant_id("simple")
    assert [v["version"] for v in client.assistants.get_versions(aid)] == [client.assistants.get(aid)["version"]]
    a = client.assistants.create("simple")
    client.assistants.update(a["assistant_id"], name="x")
    client.assistants.delete(a["assistant_id"])
    assert http.post(f"/assistants/{a['assistant_id']}/versions", json={}).status_code == 404
