"""The ``auth`` config key at start-up, and the ``@auth.authenticate`` contract.

Every ``auth`` sub-key is honoured or refused with its name; a path that does not name an
``Auth`` instance stops the server. The authenticate handler gets the parameters it names
(``request``, ``headers``, ``authorization``, ``path``, ``method``, ``path_params``,
``query_params``, ``body``...), may be sync, may return a string, a dict, an object or a
``(permissions, user)`` pair, and its failures become clear HTTP errors.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_harness import run_cli_once
from server_harness import RunningServer, start_server

from stepgraph.server.cli import run_cli

GRAPHS = {"whoami": "./graph.py:graph"}
GRAPH_FILE = Path(__file__).resolve().parent / "auth_app" / "graph.py"


def _project(tmp: Path, auth_source: str | None, auth: Any) -> Path:
    (tmp / "graph.py").write_text(GRAPH_FILE.read_text())
    if auth_source is not None:
        (tmp / "auth.py").write_text(textwrap.dedent(auth_source))
    config = {"graphs": GRAPHS}
    if auth is not None:
        config["auth"] = auth
    (tmp / "langgraph.json").write_text(json.dumps(config))
    return tmp / "langgraph.json"


GOOD = """
    from langgraph_sdk import Auth
    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization):
        return "u"
"""


@pytest.mark.parametrize("source,auth,expected", [
    # the config file's shape (server/config_policy.py), each refusal naming its key
    (GOOD, {"path": "./missing.py:auth"}, "`auth.path`: file './missing.py' does not exist"),
    (GOOD, {"path": "auth.py"}, "`auth.path`"),
    (GOOD, {}, "`auth.path`"),
    (GOOD, "./auth.py:auth", "`auth`"),
    (GOOD, {"path": "./auth.py:auth", "extra": 1}, "`auth.extra`"),
    (GOOD, {"path": "./auth.py:auth", "allow_langsmith_api_keys": True}, "`auth.allow_langsmith_api_keys`"),
    (GOOD, {"path": "./auth.py:auth", "disable_studio_auth": "yes"}, "`auth.disable_studio_auth`"),
    (GOOD, {"path": "./auth.py:auth", "cache": {"ttl_seconds": 5}}, "`auth.cache.cache_keys`"),
    (GOOD, {"path": "./auth.py:auth", "cache": {"cache_keys": ["a"], "ttl_seconds": 0}}, '"cache.ttl_seconds"'),
    (GOOD, {"path": "./auth.py:auth", "openapi": {"securitySchemes": []}}, "`auth.openapi.securitySchemes`"),
    # what the path names (server/auth/authorizer.py)
    (GOOD, {"path": "./auth.py:nope"}, '"auth": ./auth.py has no attribute \'nope\''),
    ("auth = object()\n", {"path": "./auth.py:auth"}, "not a langgraph_sdk.Auth instance"),
    ("from langgraph_sdk import Auth\nauth = Auth()\n", {"path": "./auth.py:auth"}, "no @auth.authenticate handler"),
    ("raise RuntimeError('boom')\n", {"path": "./auth.py:auth"}, "importing ./auth.py failed: RuntimeError: boom"),
    ("""
    from langgraph_sdk import Auth
    auth = Auth()

    @auth.authenticate
    async def authenticate(token):
        return "u"
    """, {"path": "./auth.py:auth"}, "unsupported required parameter(s) ['token']"),
])
def test_bad_auth_config_stops_the_server(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str,
                                          auth: Any, expected: str) -> None:
    config = _project(tmp_path, source, auth)
    assert run_cli(["serve", "--config", str(config), "--database-url", str(tmp_path / "db.sqlite")]) == 1
    err = capsys.readouterr().err
    assert expected in err, err


@pytest.mark.parametrize("auth,expected", [
    ({"path": "./missing.py:auth"}, "missing.py, which does not exist"),
    ({}, '"path" is required'),
    ({"path": "./auth.py:auth", "extra": 1}, "unknown key(s) ['extra']"),
    ({"path": "./auth.py:auth", "allow_langsmith_api_keys": True}, "allow_langsmith_api_keys"),
    ({"path": "./auth.py:auth", "cache": {"ttl_seconds": 5}}, "cache.cache_keys"),
])
def test_settings_auth_dict_is_checked_too(tmp_path: Path, auth: Any, expected: str) -> None:
    """``ServerSettings(auth={...})`` (no config file) is checked by ``server/auth`` itself."""
    from stepgraph.server import ServerSettings, create_app
    from stepgraph.server.settings import ConfigError

    (tmp_path / "auth.py").write_text(textwrap.dedent(GOOD))
    with pytest.raises(ConfigError) as info:
        create_app(ServerSettings(graphs={"whoami": str(GRAPH_FILE) + ":graph"}, base_dir=tmp_path, auth=auth))
    assert expected in str(info.value)


def test_real_process_refuses_a_missing_auth_file(tmp_path: Path) -> None:
    config = _project(tmp_path, None, {"path": "./nowhere/auth.py:auth"})
    code, out = run_cli_once(config, tmp_path)
    assert code == 1 and "`auth.path`: file './nowhere/auth.py' does not exist" in out, out


# --- in-process servers for the handler contract ----------------------------------------------
RECORDING = """
    from langgraph_sdk import Auth
    auth = Auth()
    CALLS = []

    @auth.authenticate
    def authenticate(request, headers, authorization, path, method, path_params, query_params, body, scope):
        CALLS.append({"request_path": request.url.path, "headers": headers, "authorization": authorization,
                      "path": path, "method": method, "path_params": dict(path_params),
                      "query_params": dict(query_params), "body": body, "scope_type": scope["type"]})
        token = (authorization or "").removeprefix("Bearer ")
        if token == "tuple":
            return (["p1"], {"identity": "t"})
        if token == "object":
            class U:
                identity = "obj"
                permissions = ["p2"]
                display_name = "Object User"
            return U()
        if token == "none":
            return None
        if token == "crash":
            raise KeyError("secret-detail")
        if token == "forbidden":
            raise Auth.exceptions.HTTPException(status_code=403, detail="go away")
        if not token:
            raise Auth.exceptions.HTTPException()
        return token

    @auth.on.threads.create
    async def create(ctx, value):
        value["metadata"]["perms"] = list(ctx.permissions)
        value["metadata"]["who"] = ctx.user.identity
        value["metadata"]["display"] = ctx.user.display_name

    @auth.on.threads.search
    async def search(ctx, value):
        if ctx.user.identity == "bad-filter":
            return {"owner": {"$gt": 1}}
        if ctx.user.identity == "bad-result":
            return 42
        if ctx.user.identity == "assert":
            assert False, "no searching"
        return None
"""


def _server(tmp: Path, source: str, **auth: Any) -> RunningServer:
    (tmp / "auth.py").write_text(textwrap.dedent(source))
    return start_server(tmp / "db.sqlite", graphs={"whoami": str(GRAPH_FILE) + ":graph"}, base_dir=tmp,
                        auth={"path": "./auth.py:auth", **auth})


def _calls(srv: RunningServer) -> list[dict[str, Any]]:
    return inspect.getmodule(srv.ctx.authorizer.auth._authenticate_handler).CALLS


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = _server(tmp_path_factory.mktemp("auth-rec"), RECORDING)
    try:
        yield srv
    finally:
        srv.stop()


def test_authenticate_gets_the_parameters_it_names(recording: RunningServer) -> None:
    tid = "2f0e7d8e-0000-4000-8000-000000000001"
    with httpx.Client(base_url=recording.url) as http:
        res = http.post(f"/threads/{tid}/history?limit=3", json={"limit": 3},
                        headers={"Authorization": "Bearer alice", "X-Extra": "1"})
    assert res.status_code == 404  # authenticated; the thread does not exist
    call = _calls(recording)[-1]
    assert call["request_path"] == call["path"] == f"/threads/{tid}/history"
    assert call["method"] == "POST" and call["authorization"] == "Bearer alice"
    assert call["headers"][b"x-extra"] == b"1"
    assert call["path_params"] == {"thread_id": tid} and call["query_params"] == {"limit": "3"}
    assert call["body"] == {"limit": 3} and call["scope_type"] == "http"


def test_an_authenticate_handler_reading_the_body_stays_within_the_request_limits(tmp_path: Path) -> None:
    """The body limit runs before an authenticate handler that asks for ``body``: an oversized
    chunked body (no Content-Length to refuse up front) is a 413, not an error in the auth
    middleware; a body too deep to decode reaches the handler as ``None`` and the route
    answers its coded 422."""
    (tmp_path / "auth.py").write_text(textwrap.dedent(RECORDING))
    srv = start_server(tmp_path / "db.sqlite", graphs={"whoami": str(GRAPH_FILE) + ":graph"}, base_dir=tmp_path,
                       auth={"path": "./auth.py:auth"}, max_body_bytes=1024)
    try:
        with httpx.Client(base_url=srv.url, headers={"Authorization": "Bearer alice"}) as http:
            chunks = (b'{"metadata": {"pad": "' + b"x" * 4000 + b'"}}',)
            res = http.post("/threads", content=iter(chunks), headers={"Content-Type": "application/json"})
            assert res.status_code == 413 and res.json()["detail"].startswith("[SG544]"), res.text
            deep = b'{"metadata": ' + b'{"a": ' * 80 + b"1" + b"}" * 80 + b"}"
            res = http.post("/threads", content=deep, headers={"Content-Type": "application/json"})
            assert res.status_code == 422 and res.json()["detail"].startswith("[SG541]"), res.text
            assert _calls(srv)[-1]["body"] is None
            assert http.get("/ok").status_code == 200
    finally:
        srv.stop()


def test_user_shapes_and_permissions(recording: RunningServer) -> None:
    with httpx.Client(base_url=recording.url) as http:
        got = {tok: http.post("/threads", json={}, headers={"Authorization": f"Bearer {tok}"}).json()["metadata"]
               for tok in ("plain", "tuple", "object")}
    assert got["plain"] == {"perms": [], "who": "plain", "display": "plain"}
    assert got["tuple"] == {"perms": ["p1"], "who": "t", "display": "t"}
    assert got["object"] == {"perms": ["p2"], "who": "obj", "display": "Object User"}


def test_authenticate_failures(recording: RunningServer) -> None:
    with httpx.Client(base_url=recording.url) as http:
        def call(token: str) -> httpx.Response:
            return http.post("/threads/search", json={}, headers={"Authorization": f"Bearer {token}"} if token else {})

        assert (call("").status_code, call("").json()) == (401, {"detail": "Unauthorized"})
        assert (call("forbidden").status_code, call("forbidden").json()) == (403, {"detail": "go away"})
        crash = call("crash")
        assert crash.status_code == 500 and "secret-detail" not in crash.text and "KeyError" in crash.text
        none = call("none")
        assert none.status_code == 500 and "invalid user" in none.json()["detail"]


def test_authorization_failures(recording: RunningServer) -> None:
    with httpx.Client(base_url=recording.url) as http:
        def search(token: str) -> httpx.Response:
            return http.post("/threads/search", json={}, headers={"Authorization": f"Bearer {token}"})

        bad = search("bad-filter")
        assert bad.status_code == 500 and "unknown operator '$gt'" in bad.json()["detail"]
        res = search("bad-result")
        assert res.status_code == 500 and "returned int" in res.json()["detail"]
        res = search("assert")
        assert (res.status_code, res.json()) == (403, {"detail": "no searching"})
        assert search("fine").status_code == 200


def test_authenticate_cache(tmp_path: Path) -> None:
    srv = _server(tmp_path, RECORDING, cache={"cache_keys": ["Authorization"], "ttl_seconds": 60, "max_size": 2})
    try:
        with httpx.Client(base_url=srv.url) as http:
            for token in ("a", "a", "a", "b", "c", "a"):
                assert http.post("/threads/search", json={}, headers={"Authorization": f"Bearer {token}"}).status_code == 200
            assert http.post("/threads/search", json={}).status_code == 401  # no cache key: always asked
        # a, b, c, then a again (evicted by the size limit of 2), then the tokenless request
        assert [c["authorization"] for c in _calls(srv)] == ["Bearer a", "Bearer b", "Bearer c", "Bearer a", None]
    finally:
        srv.stop()


STUDIO = """
    from langgraph_sdk import Auth
    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization):
        if not authorization:
            raise Auth.exceptions.HTTPException(status_code=401, detail="no token")
        return authorization

    @auth.on
    async def only_studio(ctx, value):
        if isinstance(ctx.user, Auth.types.StudioUser):
            return True
        return False
"""


@pytest.mark.parametrize("dev,disable,expected", [(True, False, 200), (True, True, 401), (False, False, 401)])
def test_studio_auth(tmp_path: Path, dev: bool, disable: bool, expected: int) -> None:
    (tmp_path / "auth.py").write_text(textwrap.dedent(STUDIO))
    srv = start_server(tmp_path / "db.sqlite", graphs={"whoami": str(GRAPH_FILE) + ":graph"}, base_dir=tmp_path,
                       auth={"path": "./auth.py:auth", "disable_studio_auth": disable}, dev=dev)
    try:
        with httpx.Client(base_url=srv.url) as http:
            res = http.post("/threads/search", json={}, headers={"x-auth-scheme": "langsmith"})
            assert res.status_code == expected, res.text
            # anyone else meets the handlers: the global one refuses them
            assert http.post("/threads/search", json={}, headers={"Authorization": "x"}).status_code == 403
    finally:
        srv.stop()


DENY_ALL = """
    from langgraph_sdk import Auth
    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization):
        return "mallory"

    @auth.on
    async def deny(ctx, value):
        return False
"""


def test_a_default_deny_handler_closes_every_route(tmp_path: Path) -> None:
    """Every route of the app asks authorization: with ``@auth.on`` returning False nothing but
    the public paths answers 2xx (a route that forgot to ask would)."""
    from starlette.routing import Route

    from stepgraph.server.auth import PUBLIC_PATHS

    srv = _server(tmp_path, DENY_ALL)
    try:
        seen = 0
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            for route in srv.app.routes:
                if not isinstance(route, Route) or route.path in PUBLIC_PATHS:
                    continue
                path = route.path.replace("{namespace:path}", "ns")
                for name in ("thread_id", "run_id", "assistant_id", "checkpoint_id", "cron_id"):
                    path = path.replace("{" + name + "}", "2f0e7d8e-0000-4000-8000-000000000001")
                for method in sorted((route.methods or set()) - {"HEAD"}):
                    # A body valid for the route (validation comes before authorization, as on
                    # LangGraph's server): models ignore the keys they do not declare.
                    body: Any = {
                        "assistant_id": "whoami", "graph_id": "whoami", "thread_ids": ["x"], "namespace": ["a"],
                        "key": "k", "value": {}, "checkpoint": {}, "id": 1, "method": "run.start",
                        "params": {"assistant_id": "whoami"}, "channels": ["values"], "schedule": "* * * * *"}
                    if path == "/runs/batch":
                        body = [{"assistant_id": "whoami"}]
                    elif path == "/runs/cancel":
                        body = {"status": "all"}
                    elif path == "/assistants":
                        body = {"graph_id": "whoami"}
                    query = "?namespace=a&key=k" if path == "/store/items" else ""
                    headers: dict[str, str] = {}
                    if path == "/.well-known/agent-card.json":
                        query = "?assistant_id=2f0e7d8e-0000-4000-8000-000000000001"
                    elif path.startswith("/a2a/"):
                        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                "params": {"message": {"parts": [{"kind": "text", "text": "x"}]}}}
                    elif path == "/mcp":
                        if method != "POST":  # the SDK's stream and session ends touch no resource
                            continue
                        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
                        headers = {"Accept": "application/json, text/event-stream"}
                    res = http.request(method, path + query, json=body, headers=headers)
                    seen += 1
                    if path.startswith("/a2a/") or path == "/mcp":  # JSON-RPC errors
                        assert res.json()["error"]["message"].startswith("403"), (path, res.text[:200])
                    elif path.endswith("/commands"):
                        assert res.json()["type"] == "error" and res.json()["message"].startswith("403"), path
                    elif route.path.startswith("/runs/{run_id}"):  # the run (and so its thread) is looked up first
                        assert res.status_code == 404, (method, path, res.status_code, res.text[:200])
                    else:
                        assert res.status_code == 403, (method, path, res.status_code, res.text[:200])
        assert seen >= 50
    finally:
        srv.stop()
