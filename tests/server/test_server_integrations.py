"""MCP, A2A, the custom app (``http.app``), ``http.configurable_headers`` and the route-group
switches, each against ``stepgraph serve`` started on a loopback port with a ``langgraph.json``.

Clients: the official ``mcp`` client (``ClientSession`` over streamable HTTP), ``httpx``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_harness import serve_config  # noqa: E402

APP = Path(__file__).resolve().parent / "integrations_app"
GRAPHS = {"chat": f"{APP}/graphs.py:chat", "adder": f"{APP}/graphs.py:adder",
          "headers": f"{APP}/graphs.py:headers"}
TOKEN = {"Authorization": "Bearer token-alice"}


def _config(tmp: Path, **extra: Any) -> Path:
    path = tmp / "langgraph.json"
    path.write_text(json.dumps({"graphs": GRAPHS, **extra}))
    return path


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """No auth; the custom app and configurable headers on; every route group served."""
    tmp = tmp_path_factory.mktemp("integrations")
    config = _config(tmp, http={"app": f"{APP}/webapp.py:app",
                                "configurable_headers": {"includes": ["x-user-*"], "excludes": ["x-user-secret"]}})
    with serve_config(config, tmp) as (url, _):
        yield url


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Auth; custom routes not behind it (the default)."""
    tmp = tmp_path_factory.mktemp("integrations-auth")
    config = _config(tmp, auth={"path": f"{APP}/auth.py:auth"}, http={"app": f"{APP}/webapp.py:app"})
    with serve_config(config, tmp) as (url, _):
        yield url


# -- MCP -------------------------------------------------------------------------------------
async def _mcp(url: str, headers: dict[str, str] | None = None) -> tuple[Any, Any, Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(f"{url}/mcp", headers=headers) as (read, write, _), \
            ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        called = await session.call_tool("adder", {"a": 2, "b": 3})
        return init, tools, called


async def test_mcp_lists_assistants_as_tools_and_runs_them(open_server: str) -> None:
    init, tools, called = await _mcp(open_server)
    assert init.serverInfo.name == "stepgraph"
    by_name = {t.name: t for t in tools.tools}
    assert {"chat", "adder", "headers"} <= set(by_name)
    schema = by_name["adder"].inputSchema
    assert schema["type"] == "object" and {"a", "b"} <= set(schema["properties"])
    assert not called.isError
    assert json.loads(called.content[0].text)["total"] == 5
    assert called.structuredContent["total"] == 5


async def test_mcp_bad_arguments_are_a_tool_error(open_server: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(f"{open_server}/mcp") as (read, write, _), ClientSession(read, write) as s:
        await s.initialize()
        unknown = await s.call_tool("nope", {})
        assert unknown.isError and "Unknown tool" in unknown.content[0].text


def test_mcp_transport_answers(open_server: str) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.get(f"{open_server}/mcp", headers=accept).status_code == 405  # stateless: no GET stream
    wrong = httpx.post(f"{open_server}/mcp", content=b"x", headers={**accept, "Content-Type": "text/plain"})
    assert wrong.status_code == 415 and wrong.json()["error"]["code"] == -32600
    note = httpx.post(f"{open_server}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers=accept)
    assert note.status_code == 202 and note.content == b""
    assert "post" in httpx.get(f"{open_server}/openapi.json").json()["paths"]["/mcp"]


def test_mcp_is_behind_auth(auth_server: str) -> None:
    refused = httpx.post(f"{auth_server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401


async def test_mcp_with_a_token(auth_server: str) -> None:
    _, tools, called = await _mcp(auth_server, headers=TOKEN)
    assert "adder" in {t.name for t in tools.tools}
    assert called.structuredContent["total"] == 5


# -- A2A -------------------------------------------------------------------------------------
def _assistant_id(url: str, graph_id: str, headers: dict[str, str] | None = None) -> str:
    found = httpx.post(f"{url}/assistants/search", json={"graph_id": graph_id}, headers=headers).json()
    return found[0]["assistant_id"]


def _message(text: str, context_id: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": "m1"}
    if context_id:
        msg["contextId"] = context_id
    return msg


def test_a2a_agent_card(open_server: str) -> None:
    aid = _assistant_id(open_server, "chat")
    card = httpx.get(f"{open_server}/.well-known/agent-card.json", params={"assistant_id": aid})
    assert card.status_code == 200, card.text
    body = card.json()
    assert body["url"] == f"{open_server}/a2a/{aid}" and body["capabilities"]["streaming"] is True
    assert body["skills"][0]["tags"] == ["chat"]
    no_messages = httpx.get(f"{open_server}/.well-known/agent-card.json",
                            params={"assistant_id": _assistant_id(open_server, "adder")})
    assert no_messages.status_code == 400 and "messages" in no_messages.json()["detail"]


def test_a2a_message_send_and_context(open_server: str) -> None:
    aid = _assistant_id(open_server, "chat")
    rpc = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": _message("hi")}}
    answer = httpx.post(f"{open_server}/a2a/{aid}", json=rpc, timeout=30).json()
    assert answer["id"] == 7, answer
    task = answer["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["text"] == "echo: hi"
    # The same context continues the thread: it now holds both turns.
    rpc2 = {**rpc, "params": {"message": _message("again", task["contextId"])}}
    task2 = httpx.post(f"{open_server}/a2a/{aid}", json=rpc2, timeout=30).json()["result"]
    assert task2["contextId"] == task["contextId"] and task2["id"] != task["id"]
    state = httpx.get(f"{open_server}/threads/{task['contextId']}/state").json()
    assert [m["content"] for m in state["values"]["messages"]] == ["hi", "echo: hi", "again", "echo: again"]
    got = httpx.post(f"{open_server}/a2a/{aid}", json={"jsonrpc": "2.0", "id": 8, "method": "tasks/get",
                                                       "params": {"id": task2["id"]}}).json()
    assert got["result"]["status"]["state"] == "completed"


def test_a2a_message_stream(open_server: str) -> None:
    aid = _assistant_id(open_server, "chat")
    rpc = {"jsonrpc": "2.0", "id": "s", "method": "message/stream", "params": {"message": _message("yo")}}
    with httpx.stream("POST", f"{open_server}/a2a/{aid}", json=rpc, timeout=30,
                      headers={"Accept": "text/event-stream"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]
    kinds = [e["result"]["kind"] for e in events]
    assert kinds == ["task", "status-update", "status-update", "artifact-update", "status-update"]
    streamed = events[2]["result"]["status"]
    assert streamed["state"] == "working" and streamed["message"]["parts"][0]["text"] == "echo: yo"
    assert events[3]["result"]["artifact"]["parts"][0]["text"] == "echo: yo"
    assert events[-1]["result"]["final"] is True and events[-1]["result"]["status"]["state"] == "completed"


def test_a2a_errors_are_json_rpc(open_server: str) -> None:
    aid = _assistant_id(open_server, "chat")
    url = f"{open_server}/a2a/{aid}"
    assert httpx.post(url, content=b"{nope").json()["error"]["code"] == -32700
    assert httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "x/y"}).json()["error"]["code"] == -32601
    bad = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                "params": {"message": {"parts": [{"kind": "file"}]}}}).json()
    assert bad["error"]["code"] == -32602
    cancel = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": {"id": aid}})
    assert cancel.json()["error"]["code"] == -32002


# -- http.app ---------------------------------------------------------------------------------
def test_custom_routes_beside_the_api(open_server: str) -> None:
    hello = httpx.get(f"{open_server}/hello")
    assert hello.json() == {"hello": "world", "user": None, "lifespan": True}
    assert hello.headers["x-custom-middleware"] == "yes"
    # The user's route wins on conflict; its middleware wraps the API's routes too.
    assert httpx.get(f"{open_server}/info").json() == {"custom": True}
    api = httpx.post(f"{open_server}/assistants/search", json={})
    assert api.status_code == 200 and api.headers["x-custom-middleware"] == "yes"
    assert httpx.get(f"{open_server}/only-post").status_code == 405
    assert httpx.get(f"{open_server}/nowhere").status_code == 404


def test_custom_routes_skip_auth_unless_enabled(auth_server: str) -> None:
    assert httpx.get(f"{auth_server}/hello").json()["user"] is None
    assert httpx.post(f"{auth_server}/assistants/search", json={}).status_code == 401


def test_custom_route_auth_and_mount_prefix_and_disabled_groups(tmp_path: Path) -> None:
    config = _config(tmp_path, auth={"path": f"{APP}/auth.py:auth"}, http={
        "app": f"{APP}/webapp.py:app", "enable_custom_route_auth": True, "mount_prefix": "/api",
        "disable_store": True, "disable_threads": True, "disable_meta": True, "disable_a2a": True,
        "disable_mcp": True})
    with serve_config(config, tmp_path, ok_path="/api/ok") as (url, _):
        api = f"{url}/api"
        assert httpx.get(f"{url}/ok").status_code == 404  # only under the prefix
        assert httpx.get(f"{api}/hello").status_code == 401
        assert httpx.get(f"{api}/hello", headers=TOKEN).json()["user"] == "alice"
        assert httpx.post(f"{api}/assistants/search", json={}, headers=TOKEN).status_code == 200
        for method, path in (("POST", "/store/items/search"), ("POST", "/threads"), ("GET", "/openapi.json"),
                             ("POST", "/mcp"), ("GET", "/.well-known/agent-card.json")):
            assert httpx.request(method, f"{api}{path}", json={}, headers=TOKEN).status_code == 404, path
        # Runs stay (a stateless run needs no thread routes).
        done = httpx.post(f"{api}/runs/wait", json={"assistant_id": "adder", "input": {"a": 1, "b": 1}},
                          headers=TOKEN, timeout=30)
        assert done.json()["total"] == 2


def test_disable_runs_and_assistants(tmp_path: Path) -> None:
    config = _config(tmp_path, http={"disable_runs": True, "disable_assistants": True})
    with serve_config(config, tmp_path) as (url, _):
        assert httpx.post(f"{url}/assistants/search", json={}).status_code == 404
        assert httpx.post(f"{url}/runs/wait", json={"assistant_id": "adder"}).status_code == 404
        thread = httpx.post(f"{url}/threads", json={}).json()
        assert httpx.post(f"{url}/threads/{thread['thread_id']}/runs/wait",
                          json={"assistant_id": "adder"}).status_code == 404
        assert httpx.get(f"{url}/threads/{thread['thread_id']}/state").status_code == 200
        assert httpx.get(f"{url}/info").status_code == 200


# -- http.configurable_headers ------------------------------------------------------------
def test_configurable_headers(open_server: str) -> None:
    out = httpx.post(f"{open_server}/runs/wait", json={"assistant_id": "headers", "input": {"x": 1}},
                     headers={"X-User-Id": "u-1", "X-User-Secret": "s", "X-Other": "o"}, timeout=30).json()
    assert out["seen"] == {"x-user-id": "u-1", "x-user-secret": None, "x-other": None}
