"""``/ui`` on the server (issue 16): where the studio is served, how, and what it exposes.

On in ``dev``, off in ``serve`` unless ``http.studio`` (or ``--studio``); ``http.disable_ui``
turns it off. Its files are public (they hold no data) while the API calls it makes pass auth;
pages carry a Content-Security-Policy that loads nothing from other origins.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from stepgraph.server import create_app
from stepgraph.server.cli import build_parser
from stepgraph.server.settings import load_settings
from stepgraph.server.ui_routes import build_info

REPO = Path(__file__).resolve().parents[2]
AUTH = REPO / "tests" / "server" / "integrations_app" / "auth.py"
GRAPH = (
    "from typing_extensions import TypedDict\n"
    "from stepgraph.graph import START, StateGraph\n"
    "class S(TypedDict):\n    x: int\n"
    "graph = StateGraph(S).add_node('n', lambda s: {'x': s['x'] + 1}).add_edge(START, 'n').compile()\n"
)


@contextmanager
def studio_app(tmp: Path, *, dev: bool, **extra: Any) -> Iterator[TestClient]:
    (tmp / "g.py").write_text(GRAPH)
    (tmp / "langgraph.json").write_text(json.dumps({"graphs": {"g": "./g.py:graph"}, **extra}))
    settings = load_settings(tmp / "langgraph.json", dev=dev, database_url=str(tmp / "db.sqlite"))
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        yield client


def test_dev_serves_the_studio(tmp_path: Path) -> None:
    with studio_app(tmp_path, dev=True) as c:
        moved = c.get("/ui", follow_redirects=False)
        assert moved.status_code == 307 and moved.headers["location"] == "ui/"
        page = c.get("/ui/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assets = [name for name in build_info()["files"] if name.startswith("assets/")]
        assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
        for name in assets:
            assert f'"./{name}"' in page.text
            got = c.get(f"/ui/{name}")
            assert got.status_code == 200 and "immutable" in got.headers["cache-control"], name
        assert c.get("/ui/assets/nope.js").status_code == 404
        assert c.get("/ui/assets/../index.html").status_code == 404
        # the API the page calls is the ordinary one, on the same origin
        assert c.post("/assistants/search", json={}).status_code == 200
        assert "/ui/" not in json.dumps(c.get("/openapi.json").json()["paths"])


def test_serve_keeps_it_off_unless_enabled(tmp_path: Path) -> None:
    with studio_app(tmp_path, dev=False) as c:
        assert c.get("/ui/").status_code == 404
    with studio_app(tmp_path, dev=False, http={"studio": True}) as c:
        assert c.get("/ui/").status_code == 200


@pytest.mark.parametrize("http", [{"studio": False}, {"disable_ui": True}])
def test_dev_can_turn_it_off(tmp_path: Path, http: dict[str, Any]) -> None:
    with studio_app(tmp_path, dev=True, http=http) as c:
        assert c.get("/ui/").status_code == 404


def test_under_a_mount_prefix(tmp_path: Path) -> None:
    with studio_app(tmp_path, dev=True, http={"mount_prefix": "/api"}) as c:
        moved = c.get("/api/ui", follow_redirects=False)
        assert moved.status_code == 307 and moved.headers["location"] == "ui/"  # -> /api/ui/
        assert c.get("/api/ui/").status_code == 200
        assert c.get("/ui/").status_code == 404


def test_behind_auth_the_files_are_public_and_the_api_is_not(tmp_path: Path) -> None:
    with studio_app(tmp_path, dev=False, auth={"path": str(AUTH) + ":auth"}, http={"studio": True}) as c:
        assert c.get("/ui/").status_code == 200
        name = next(n for n in build_info()["files"] if n.endswith(".js"))
        assert c.get(f"/ui/{name}").status_code == 200
        assert c.post("/assistants/search", json={}).status_code == 401
        assert c.post("/ui/assets/x", json={}).status_code == 401  # only GET/HEAD of its files skip auth
        ok = c.post("/assistants/search", json={}, headers={"Authorization": "Bearer token-alice"})
        assert ok.status_code == 200


def test_cli_flag() -> None:
    parser = build_parser()
    assert parser.parse_args(["serve", "--studio"]).studio is True
    assert parser.parse_args(["dev", "--no-studio"]).studio is False
    assert parser.parse_args(["dev"]).studio is None


@pytest.mark.parametrize(("argv", "shown"), [
    (["dev"], True), (["dev", "--no-studio"], False), (["serve"], False), (["serve", "--studio"], True),
])
def test_cli_prints_the_studio_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], argv: list[str], shown: bool) -> None:
    import uvicorn

    from stepgraph.server.cli import run_cli

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    (tmp_path / "g.py").write_text(GRAPH)
    (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"g": "./g.py:graph"}}))
    assert run_cli([*argv, "--config", str(tmp_path / "langgraph.json"), "--port", "2999",
                    "--database-url", str(tmp_path / "db.sqlite")]) == 0
    out = capsys.readouterr().out
    assert ("studio: http://127.0.0.1:2999/ui/" in out) is shown, out
