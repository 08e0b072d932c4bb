"""CORS (Starlette's middleware, loopback origins by default, ``http.cors``) and the ``Host``
header check, in process through the ASGI app (the real-process cases are in
``test_server_cli_config.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from stepgraph.server import ServerSettings
from stepgraph.server.app import create_app
from stepgraph.server.config_errors import ConfigError
from stepgraph.server.config_schema import CorsConfig
from stepgraph.server.hosts import allowed_hosts_for, is_loopback_bind, parse_host

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def make_client(tmp: Path, *, host_header: str = "127.0.0.1:2024", **settings: Any) -> TestClient:
    app = create_app(ServerSettings(graphs={"simple": "./server_graphs.py:simple"}, base_dir=EXAMPLES,
                                    database_url=str(tmp / "db.sqlite"), **settings))
    return TestClient(app, base_url=f"http://{host_header}")


@pytest.fixture
def default_client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path) as client:
        yield client


def preflight(client: TestClient, origin: str, method: str = "POST", **extra: str) -> Any:
    return client.options("/threads/search", headers={"Origin": origin, "Access-Control-Request-Method": method,
                                                      "Access-Control-Request-Headers": "content-type", **extra})


@pytest.mark.parametrize("origin", ["http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8080",
                                    "http://localhost", "https://localhost:8443"])
def test_default_allows_loopback_origins(default_client: TestClient, origin: str) -> None:
    resp = preflight(default_client, origin)
    assert resp.status_code == 200 and resp.headers["access-control-allow-origin"] == origin
    simple = default_client.post("/threads/search", json={}, headers={"Origin": origin})
    assert simple.headers["access-control-allow-origin"] == origin
    assert "content-location" in simple.headers["access-control-expose-headers"]


@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost.evil.example",
                                    "http://127.0.0.1.evil.example:80", "null", "http://10.0.0.5:3000"])
def test_default_refuses_other_origins(default_client: TestClient, origin: str) -> None:
    resp = preflight(default_client, origin)
    assert resp.status_code == 400 and "origin" in resp.text
    assert "access-control-allow-origin" not in resp.headers
    simple = default_client.post("/threads/search", json={}, headers={"Origin": origin})
    assert simple.status_code == 200 and "access-control-allow-origin" not in simple.headers


def test_default_never_grants_private_network_access(default_client: TestClient) -> None:
    resp = preflight(default_client, "https://evil.example", **{"Access-Control-Request-Private-Network": "true"})
    assert resp.status_code == 400 and "access-control-allow-private-network" not in resp.headers
    loop = preflight(default_client, "http://localhost:3000", **{"Access-Control-Request-Private-Network": "true"})
    assert "access-control-allow-private-network" not in loop.headers


def test_configured_cors(tmp_path: Path) -> None:
    cors = CorsConfig(allow_origins=["https://app.example"], allow_methods=["GET", "POST"],
                      allow_headers=["content-type", "authorization"], allow_credentials=True,
                      expose_headers=["x-pagination-total"], max_age=42)
    with make_client(tmp_path, cors=cors) as client:
        ok = preflight(client, "https://app.example")
        assert ok.status_code == 200
        h = ok.headers
        assert h["access-control-allow-origin"] == "https://app.example"
        assert h["access-control-allow-credentials"] == "true" and h["access-control-max-age"] == "42"
        assert "authorization" in h["access-control-allow-headers"]
        assert preflight(client, "https://app.example", "DELETE").status_code == 400
        assert preflight(client, "http://localhost:5173").status_code == 400  # the default is replaced
        pna = preflight(client, "https://app.example", **{"Access-Control-Request-Private-Network": "true"})
        assert pna.status_code == 200 and pna.headers["access-control-allow-private-network"] == "true"
        simple = client.post("/threads/search", json={}, headers={"Origin": "https://app.example"})
        assert simple.headers["access-control-expose-headers"] == "x-pagination-total"


def test_configured_regex_and_wildcard(tmp_path: Path) -> None:
    with make_client(tmp_path, cors=CorsConfig(allow_origin_regex=r"https://[a-z]+\.corp\.example")) as client:
        assert preflight(client, "https://app.corp.example").status_code == 200
        assert preflight(client, "https://corp.example").status_code == 400
    with make_client(tmp_path, cors=CorsConfig(allow_origins=["*"])) as client:
        resp = preflight(client, "https://anyone.example", **{"Access-Control-Request-Private-Network": "true"})
        assert resp.status_code == 400 and "private-network" in resp.text  # never "*" with private network
        assert preflight(client, "https://anyone.example").headers["access-control-allow-origin"] == "*"


def test_cors_without_origins_keeps_loopback_default(tmp_path: Path) -> None:
    with make_client(tmp_path, cors=CorsConfig(max_age=5)) as client:
        resp = preflight(client, "http://localhost:1234")
        assert resp.status_code == 200 and resp.headers["access-control-max-age"] == "5"
        assert preflight(client, "https://evil.example").status_code == 400


# -- Host header -----------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["localhost:2024", "127.0.0.1", "127.0.0.1:9", "[::1]:2024", "LOCALHOST:1"])
def test_loopback_bind_accepts_loopback_hosts(tmp_path: Path, host: str) -> None:
    with make_client(tmp_path, host_header=host) as client:
        assert client.get("/ok").status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:2024", "127.0.0.1.nip.io:2024", "10.0.0.1",
                                  "localhost.evil.example", "[::2]:80"])
def test_loopback_bind_refuses_other_hosts(tmp_path: Path, host: str) -> None:
    with make_client(tmp_path, host_header=host) as client:
        resp = client.get("/ok")
        assert resp.status_code == 400
        detail = resp.json()["detail"]
        assert "SG531" in detail and "DNS rebinding" in detail and "--allowed-hosts" in detail
        assert client.post("/runs/wait", json={"assistant_id": "simple", "input": {}}).status_code == 400


def test_malformed_or_missing_host_refused(tmp_path: Path) -> None:
    with make_client(tmp_path) as client:
        assert client.get("/ok", headers={"Host": "a b"}).status_code == 400
        assert client.get("/ok", headers={"Host": ""}).status_code == 400


def test_non_loopback_bind_accepts_any_host(tmp_path: Path) -> None:
    with make_client(tmp_path, host="0.0.0.0", host_header="my-server.example:2024") as client:
        assert client.get("/ok").status_code == 200


def test_allowed_hosts_setting(tmp_path: Path) -> None:
    with make_client(tmp_path, allowed_hosts=["api.example", "*.corp.example"],
                     host_header="api.example:2024") as client:
        assert client.get("/ok").status_code == 200
        assert client.get("/ok", headers={"Host": "x.corp.example"}).status_code == 200
        assert client.get("/ok", headers={"Host": "corp.example"}).status_code == 400
        assert client.get("/ok", headers={"Host": "localhost:1"}).status_code == 200
        assert client.get("/ok", headers={"Host": "other.example"}).status_code == 400
    with make_client(tmp_path, host="0.0.0.0", allowed_hosts=["api.example"], host_header="x.example") as client:
        assert client.get("/ok").status_code == 400  # explicit list on a network bind: checked
    with make_client(tmp_path, allowed_hosts=["*"], host_header="anything.example") as client:
        assert client.get("/ok").status_code == 200


def test_bad_allowed_hosts_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="allowed-hosts"):
        make_client(tmp_path, allowed_hosts=["a*.example"])


def test_host_helpers() -> None:
    assert parse_host("[::1]:2024") == "[::1]" and parse_host("Example.COM:80") == "example.com"
    for bad in ("", "a b", "x:y", "[::1", "[zz]:1", "a/b", "u@h", "h:1234567"):
        assert parse_host(bad) is None, bad
    assert all(is_loopback_bind(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback_bind(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com"))
    assert allowed_hosts_for("::", None) == ["*"]
    assert allowed_hosts_for("127.0.0.1", ["a.example"]) == ["localhost", "127.0.0.1", "[::1]", "a.example"]
