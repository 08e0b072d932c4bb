"""Custom auth end to end: ``stepgraph serve`` with ``auth_app/langgraph.json`` (LangGraph's
custom-auth recipe: bearer token -> user, owner stamped on create, owner filter), driven
with ``langgraph_sdk`` as two users, alice and bob, on SQLite and on PostgreSQL.

Every read, search, count, stream, join, state, history, copy, delete and store path is
tried across users: what alice owns answers bob 404 (searches and counts leave it out);
bob may not delete at all (his delete handler returns False: 403); the graph sees the user
in its config, through ``get_config()`` and in ``runtime.server_info``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_harness import pg_schema_url, pg_unreachable, serve_config

APP = Path(__file__).resolve().parent / "auth_app"
ALICE = {"Authorization": "Bearer token-alice"}
BOB = {"Authorization": "Bearer token-bob"}


class World:
    """One server, the clients of both users and what alice made before bob looks."""

    def __init__(self, url: str) -> None:
        from langgraph_sdk import get_sync_client

        self.url = url
        self.alice = get_sync_client(url=url, api_key=None, headers=ALICE)
        self.bob = get_sync_client(url=url, api_key=None, headers=BOB)
        self.http = httpx.Client(base_url=url, timeout=30)
        # alice: a thread with a finished run, an interrupted thread, an assistant, a store item
        self.thread = self.alice.threads.create(metadata={"topic": "mine"})["thread_id"]
        self.result = self.alice.runs.wait(self.thread, "whoami", input={"value": "x"})
        self.run = self.alice.runs.list(self.thread)[0]["run_id"]
        self.paused = self.alice.threads.create()["thread_id"]
        self.alice.runs.wait(self.paused, "hitl", input={})
        self.assistant = self.alice.assistants.create(graph_id="whoami", name="alice's")["assistant_id"]
        self.alice.store.put_item(["notes"], "k1", {"text": "alice's note"})

    def raw(self, method: str, path: str, headers: dict[str, str], **kw: Any) -> httpx.Response:
        return self.http.request(method, path, headers=headers, **kw)


def _backends() -> list[Any]:
    return ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module", params=_backends())
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp(f"auth-{request.param}")
    if request.param == "postgres":
        reason = pg_unreachable()
        if reason:
            pytest.skip(reason)
        with pg_schema_url() as url, serve_config(APP / "langgraph.json", tmp, database_url=url) as (srv, _):
            yield World(srv)
    else:
        with serve_config(APP / "langgraph.json", tmp) as (srv, _):
            yield World(srv)


def status(call: Callable[[], Any]) -> int:
    """The HTTP status a client call failed with (200 when it succeeded)."""
    try:
        call()
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code
    return 200


# --- authentication -------------------------------------------------------------------------
@pytest.mark.parametrize("method,path", [
    ("POST", "/threads"), ("POST", "/threads/search"), ("POST", "/threads/count"),
    ("POST", "/assistants/search"), ("GET", "/store/items?namespace=notes&key=k1"),
    ("POST", "/runs/wait"), ("POST", "/runs/stream"), ("GET", "/threads/00000000-0000-0000-0000-000000000000"),
    ("POST", "/store/namespaces"), ("POST", "/runs/cancel"), ("GET", "/no/such/route"),
])
def test_no_token_is_401(world: World, method: str, path: str) -> None:
    res = world.raw(method, path, {}, json={})
    assert res.status_code == 401, res.text
    assert res.json() == {"detail": "Missing bearer token"}
    assert res.headers["www-authenticate"] == "Bearer"
    assert world.raw(method, path, {"Authorization": "Bearer nope"}, json={}).json() == {"detail": "Invalid token"}


def test_public_paths_need_no_token(world: World) -> None:
    for path in ("/ok", "/info", "/openapi.json"):
        assert world.raw("GET", path, {}).status_code == 200, path
    doc = world.raw("GET", "/openapi.json", {}).json()
    assert doc["components"]["securitySchemes"] == {"BearerAuth": {"type": "http", "scheme": "bearer"}}
    assert doc["security"] == [{"BearerAuth": []}]
    assert doc["paths"]["/ok"]["get"]["security"] == []
    # what auth adds to every other operation's answers (the typed document, auth applied)
    assert "401" not in doc["paths"]["/ok"]["get"]["responses"]
    for path, ops in doc["paths"].items():
        if path not in ("/ok", "/info", "/openapi.json", "/metrics", "/docs"):  # the public paths
            for method, op in ops.items():
                assert {"401", "403", "422"} <= set(op["responses"]), (method, path)
    assert "404" in doc["paths"]["/threads/prune"]["post"]["responses"]
    assert "404" in doc["paths"]["/threads/{thread_id}/stream/events"]["post"]["responses"]
    assert doc["components"]["schemas"]["ThreadCreate"]["properties"]["metadata"]
    assert doc["components"]["schemas"]["Run"]["properties"]["error"]


def test_handler_status_and_headers_pass_through(world: World) -> None:
    res = world.raw("GET", "/teapot", ALICE)
    assert res.status_code == 418 and res.json() == {"detail": "short and stout"}
    assert res.headers["x-teapot"] == "yes"


# --- threads ----------------------------------------------------------------------------------
def test_owner_is_stamped(world: World) -> None:
    assert world.alice.threads.get(world.thread)["metadata"] == {
        "topic": "mine", "owner": "alice", "graph_id": "whoami",
        "assistant_id": world.alice.threads.get(world.thread)["metadata"]["assistant_id"]}
    bob_thread = world.bob.threads.create(metadata={"owner": "alice"})  # cannot claim alice's name
    assert bob_thread["metadata"]["owner"] == "bob"


def test_cross_user_thread_reads_are_404(world: World) -> None:
    b, t = world.bob, world.thread
    calls = {
        "get": lambda: b.threads.get(t),
        "update": lambda: b.threads.update(t, metadata={"x": 1}),
        "copy": lambda: b.threads.copy(t),
        "state": lambda: b.threads.get_state(t),
        "state at checkpoint": lambda: b.threads.get_state(t, checkpoint_id=str(uuid.uuid4())),
        "history": lambda: b.threads.get_history(t),
        "update_state": lambda: b.threads.update_state(t, {"value": "hacked"}),
        "runs.list": lambda: b.runs.list(t),
        "runs.get": lambda: b.runs.get(t, world.run),
        "runs.join": lambda: b.runs.join(t, world.run),
        "runs.cancel": lambda: b.runs.cancel(t, world.run),
        "runs.wait on it": lambda: b.runs.wait(t, "whoami", input={}),
        "runs.create on it": lambda: b.runs.create(t, "whoami", input={}),
        "runs.wait if_not_exists=create": lambda: b.runs.wait(t, "whoami", input={}, if_not_exists="create"),
    }
    got = {name: status(call) for name, call in calls.items()}
    assert got == dict.fromkeys(calls, 404), got
    # deleting a run is a threads.delete event: bob's delete handler refuses before any lookup
    assert status(lambda: b.runs.delete(t, world.run)) == 403
    # and nothing changed for alice
    assert world.alice.threads.get(t)["metadata"].get("x") is None
    assert world.alice.threads.get_state(t)["values"]["value"] == "x"


def test_cross_user_raw_paths_are_404(world: World) -> None:
    t, r = world.thread, world.run
    cases = [
        ("GET", f"/threads/{t}/history", None), ("POST", f"/threads/{t}/history", {}),
        ("POST", f"/threads/{t}/state/checkpoint", {"checkpoint": {}}),
        ("GET", f"/threads/{t}/runs/{r}/stream", None), ("GET", f"/runs/{r}", None),
        ("GET", f"/runs/{r}/join", None), ("GET", f"/runs/{r}/stream", None), ("POST", f"/runs/{r}/cancel", None),
        ("GET", f"/threads/{t}/stream", None),
        ("POST", f"/threads/{t}/stream/events", {"channels": ["values"]}),
    ]
    got = {(m, p): world.raw(m, p, BOB, json=body).status_code for m, p, body in cases}
    assert set(got.values()) == {404}, got
    # the same requests as alice work
    for m, p, body in cases[:6]:
        assert world.raw(m, p, ALICE, json=body).status_code == 200, p


def test_v3_commands_refuse_foreign_threads(world: World) -> None:
    res = world.raw("POST", f"/threads/{world.paused}/commands", BOB,
                    json={"id": 1, "method": "input.respond", "params": {"interrupt_id": "x", "response": "bob"}})
    assert res.status_code == 200 and res.json()["type"] == "error"
    assert res.json()["message"].startswith("404")
    res = world.raw("POST", f"/threads/{world.paused}/commands", BOB,
                    json={"id": 2, "method": "run.start", "params": {"assistant_id": "whoami", "input": {}}})
    assert res.json()["type"] == "error" and res.json()["message"].startswith("404")
    assert world.alice.threads.get(world.paused)["status"] == "interrupted"


def test_searches_and_counts_leave_foreign_threads_out(world: World) -> None:
    mine = {t["thread_id"] for t in world.alice.threads.search(limit=100)}
    assert {world.thread, world.paused} <= mine
    theirs = {t["thread_id"] for t in world.bob.threads.search(limit=100)}
    assert not theirs & mine
    assert world.bob.threads.search(metadata={"topic": "mine"}) == []
    assert world.bob.threads.search(ids=[world.thread]) == []
    # the handler rewrites the search's metadata filter to bob's own name (as on LangGraph)
    assert all(t["metadata"]["owner"] == "bob" for t in world.bob.threads.search(metadata={"owner": "alice"}))
    assert world.bob.threads.count(metadata={"owner": "alice"}) == world.bob.threads.count()
    assert world.alice.threads.count(metadata={"topic": "mine"}) == 1
    assert world.bob.threads.search(status="interrupted") == []
    assert world.alice.threads.search(values={"value": "x"})[0]["thread_id"] == world.thread
    assert world.bob.threads.search(values={"value": "x"}) == []
    assert all(t["metadata"]["owner"] == "alice" for t in world.alice.threads.search(limit=100))


def test_owner_can_do_everything(world: World) -> None:
    a, t = world.alice, world.thread
    assert a.threads.get_state(t)["values"]["value"] == "x"
    assert len(a.threads.get_history(t)) >= 2
    copy = a.threads.copy(t)
    assert copy["metadata"]["owner"] == "alice"
    assert a.threads.get_state(copy["thread_id"])["values"]["value"] == "x"
    assert status(lambda: world.bob.threads.get(copy["thread_id"])) == 404
    assert a.runs.get(t, world.run)["status"] == "success"
    assert a.runs.join(t, world.run)["who"]["user_id"] == "alice"
    assert a.threads.update(t, metadata={"seen": True})["metadata"]["seen"] is True
    parts = list(a.runs.stream(t, "whoami", input={"value": "y"}, stream_mode="values"))
    assert parts[-1].data["who"]["identity"] == "alice"


def test_stream_join_of_foreign_run_is_404(world: World) -> None:
    run = world.alice.runs.create(world.thread, "whoami", input={"value": "z"})
    assert status(lambda: list(world.bob.runs.join_stream(world.thread, run["run_id"]))) == 404
    assert world.alice.runs.join(world.thread, run["run_id"])["who"]["user_id"] == "alice"


def test_the_graph_sees_the_user(world: World) -> None:
    assert world.result["who"] == {
        "user_id": "alice", "identity": "alice", "attr_identity": "alice", "display_name": "Alice",
        "team": "red", "permissions": ["threads:delete"], "configurable_user_id": "alice",
        "server_user": "alice", "server_graph": "whoami"}
    bob = world.bob.runs.wait(None, "whoami", input={})  # stateless
    assert bob["who"]["user_id"] == "bob" and bob["who"]["permissions"] == []
    assert bob["who"]["display_name"] == "bob"


def test_a_client_cannot_claim_another_user(world: World) -> None:
    spoof = {"langgraph_auth_user_id": "alice", "langgraph_auth_user": {"identity": "alice"},
             "langgraph_auth_permissions": ["threads:delete"]}
    out = world.bob.runs.wait(None, "whoami", input={}, config={"configurable": spoof})
    assert out["who"]["user_id"] == "bob" and out["who"]["identity"] == "bob"
    assert out["who"]["permissions"] == []


def test_runs_on_new_threads_are_owned(world: World) -> None:
    tid = str(uuid.uuid4())
    world.bob.runs.wait(tid, "whoami", input={}, if_not_exists="create")
    assert world.bob.threads.get(tid)["metadata"]["owner"] == "bob"
    assert status(lambda: world.alice.threads.get(tid)) == 404


def test_handler_returning_false_is_403(world: World) -> None:
    own = world.bob.threads.create()["thread_id"]
    assert status(lambda: world.bob.threads.delete(own)) == 403
    res = world.raw("POST", "/threads/prune", BOB, json={"thread_ids": [own]})
    assert res.status_code == 403
    assert world.bob.threads.get(own)["thread_id"] == own
    # alice has the permission the handler checks: her own thread goes, bob's stays invisible
    doomed = world.alice.threads.create()["thread_id"]
    world.alice.threads.delete(doomed)
    assert status(lambda: world.alice.threads.get(doomed)) == 404
    assert status(lambda: world.alice.threads.delete(own)) == 404


def test_cancel_all_leaves_other_users_runs(world: World) -> None:
    tid = world.alice.threads.create()["thread_id"]
    run = world.alice.runs.create(tid, "slow", input={"value": "1.5"})
    deadline = time.monotonic() + 20
    while world.alice.runs.get(tid, run["run_id"])["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert world.raw("POST", "/runs/cancel", BOB, json={"status": "all"}).status_code == 204
    world.alice.runs.join(tid, run["run_id"])
    assert world.alice.runs.get(tid, run["run_id"])["status"] == "success"


# --- assistants -------------------------------------------------------------------------------
def test_assistants_are_private_but_system_ones_shared(world: World) -> None:
    a, b, aid = world.alice, world.bob, world.assistant
    assert a.assistants.get(aid)["metadata"]["owner"] == "alice"
    got = {
        "get": status(lambda: b.assistants.get(aid)),
        "graph": status(lambda: b.assistants.get_graph(aid)),
        "schemas": status(lambda: b.assistants.get_schemas(aid)),
        "subgraphs": status(lambda: b.assistants.get_subgraphs(aid)),
        "versions": status(lambda: b.assistants.get_versions(aid)),
        "update": status(lambda: b.assistants.update(aid, name="bob's now")),
        "delete": status(lambda: b.assistants.delete(aid)),
        "run with it": status(lambda: b.runs.wait(None, aid, input={})),
    }
    assert got == dict.fromkeys(got, 404), got
    bob_sees = {x["assistant_id"] for x in b.assistants.search(limit=100)}
    assert aid not in bob_sees and len(bob_sees) == 3  # the three system assistants
    assert b.assistants.count() == 3 and a.assistants.count() == 4
    assert b.assistants.get_graph("whoami")["nodes"]  # a graph id names the shared system assistant
    assert a.runs.wait(None, aid, input={})["who"]["user_id"] == "alice"
    assert a.assistants.get(aid)["name"] == "alice's"


# --- store ------------------------------------------------------------------------------------
def test_store_is_scoped_per_user(world: World) -> None:
    a, b = world.alice, world.bob
    item = a.store.get_item(["notes"], "k1")
    assert item["value"] == {"text": "alice's note"} and item["namespace"] == ["alice", "notes"]
    assert b.store.get_item(["notes"], "k1") is None
    assert b.store.get_item(["alice", "notes"], "k1") is None  # rewritten to ("bob", "alice", "notes")
    assert b.store.search_items(["notes"])["items"] == []
    assert b.store.search_items([])["items"] == []
    assert [i["key"] for i in a.store.search_items(["notes"])["items"]] == ["k1"]
    assert b.store.list_namespaces()["namespaces"] == []
    assert ["alice", "notes"] in a.store.list_namespaces()["namespaces"]
    b.store.delete_item(["notes"], "k1")  # deletes bob's (missing) item, not alice's
    assert a.store.get_item(["notes"], "k1")["value"] == {"text": "alice's note"}
    b.store.put_item(["notes"], "k1", {"text": "bob's"})
    assert a.store.get_item(["notes"], "k1")["value"] == {"text": "alice's note"}
    assert b.store.get_item(["notes"], "k1")["value"] == {"text": "bob's"}
