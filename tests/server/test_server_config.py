"""Every key of ``langgraph.json`` at start-up: honoured (with its effect checked), accepted as a
build-time key (with a log line), or refused with ``ConfigError`` naming the key and a code.

``load_settings`` decides the keys; a few cases go on through ``create_app`` (the graph's
description on its assistant, ``dependencies`` on ``sys.path``, ``env`` applied).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stepgraph.server.config_errors import (
    CONFIG_INVALID,
    CONFIG_MISSING_PATH,
    CONFIG_UNKNOWN_KEY,
    CONFIG_UNSUPPORTED,
    ConfigError,
)
from stepgraph.server.settings import load_settings

GRAPH = (
    "from typing_extensions import TypedDict\n"
    "from stepgraph.graph import START, StateGraph\n"
    "class S(TypedDict):\n    x: int\n"
    "graph = StateGraph(S).add_node('n', lambda s: {'x': s['x'] + 1}).add_edge(START, 'n')\n"
)

OK, REFUSED, INVALID, MISSING, UNKNOWN = "ok", CONFIG_UNSUPPORTED, CONFIG_INVALID, CONFIG_MISSING_PATH, CONFIG_UNKNOWN_KEY


AUTH_MODULE = (
    "from langgraph_sdk import Auth\n"
    "auth = Auth()\n"
    "@auth.authenticate\n"
    "async def authenticate(headers: dict) -> str:\n"
    "    return 'anyone'\n"
)


def write_config(tmp: Path, extra: dict[str, Any], *, name: str = "langgraph.json") -> Path:
    """A config with one graph ``g`` (``./g.py:graph``) plus ``extra`` keys."""
    (tmp / "g.py").write_text(GRAPH)
    (tmp / "auth.py").write_text(AUTH_MODULE)
    (tmp / ".env").write_text("# comment\nSG_CFG_A=1\nexport SG_CFG_B='two words'\n")
    (tmp / "pip.conf").write_text("[global]\n")
    (tmp / "embed.py").write_text("def embed(texts):\n    return [[float(len(t)), 1.0, 0.0] for t in texts]\n")
    (tmp / "webapp.py").write_text("from starlette.applications import Starlette\napp = Starlette()\n")
    (tmp / "src").mkdir(exist_ok=True)
    (tmp / "uvproj").mkdir(exist_ok=True)
    (tmp / "uvproj" / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp / "uvproj" / "uv.lock").write_text("")
    config = {"graphs": {"g": "./g.py:graph"}, **extra}
    path = tmp / name
    path.write_text(json.dumps(config))
    return path


def outcome(tmp: Path, extra: dict[str, Any]) -> Any:
    """The settings, or ``(code, key)`` of the first refused key."""
    try:
        return load_settings(write_config(tmp, extra))
    except ConfigError as exc:
        assert exc.problems, str(exc)
        assert exc.key in str(exc)
        return exc.code, exc.key


# (id, extra config, expected): expected is OK, or (code, dotted key)
CASES: list[tuple[str, dict[str, Any], Any]] = [
    # -- graphs --
    ("graphs-string", {}, OK),
    ("graphs-object", {"graphs": {"g": {"path": "./g.py:graph", "description": "adds one"}}}, OK),
    ("graphs-object-unknown-key", {"graphs": {"g": {"path": "./g.py:graph", "descriptio": "x"}}},
     (UNKNOWN, "graphs.g.descriptio")),
    ("graphs-object-no-path", {"graphs": {"g": {"description": "x"}}}, (INVALID, "graphs.g.path")),
    ("graphs-missing-file", {"graphs": {"g": "./nope.py:graph"}}, (MISSING, "graphs.g")),
    ("graphs-no-colon", {"graphs": {"g": "./g.py"}}, (INVALID, "graphs.g")),
    ("graphs-not-string", {"graphs": {"g": 3}}, (INVALID, "graphs.g")),
    ("graphs-javascript", {"graphs": {"g": "./agent.ts:graph"}}, (REFUSED, "graphs.g")),
    ("graphs-empty", {"graphs": {}}, (INVALID, "graphs")),
    ("graphs-not-object", {"graphs": ["./g.py:graph"]}, (INVALID, "graphs")),
    # -- dependencies --
    ("dependencies-local", {"dependencies": [".", "./src"]}, OK),
    ("dependencies-missing", {"dependencies": ["./missing_pkg"]}, (MISSING, "dependencies[0]")),
    ("dependencies-package", {"dependencies": ["pytest>=8", "git+https://example.invalid/x.git"]}, OK),
    ("dependencies-not-list", {"dependencies": "."}, (INVALID, "dependencies")),
    # -- env --
    ("env-object", {"env": {"SG_CFG_X": "1"}}, OK),
    ("env-not-string", {"env": {"SG_CFG_X": 1}}, (INVALID, "env.SG_CFG_X")),
    ("env-file", {"env": ".env"}, OK),
    ("env-file-missing", {"env": "missing.env"}, (MISSING, "env")),
    ("env-folder", {"env": "src"}, (INVALID, "env")),
    ("env-bad-type", {"env": 3}, (INVALID, "env")),
    # -- build-time keys --
    ("$schema", {"$schema": "https://langgra.ph/schema.json"}, OK),
    ("python_version", {"python_version": "3.12"}, OK),
    ("python_version-format", {"python_version": "3.12.1"}, (INVALID, "python_version")),
    ("python_version-too-old", {"python_version": "3.10"}, (INVALID, "python_version")),
    ("api_version", {"api_version": "0.8"}, OK),
    ("api_version-format", {"api_version": "latest!"}, (INVALID, "api_version")),
    ("_INTERNAL_docker_tag", {"_INTERNAL_docker_tag": "x"}, OK),
    ("base_image", {"base_image": "langchain/langgraph-api"}, OK),
    ("image_distro", {"image_distro": "wolfi"}, OK),
    ("image_distro-bad", {"image_distro": "bullseye"}, (INVALID, "image_distro")),
    ("pip_config_file", {"pip_config_file": "pip.conf"}, OK),
    ("pip_config_file-missing", {"pip_config_file": "nope.conf"}, (MISSING, "pip_config_file")),
    ("pip_installer", {"pip_installer": "uv"}, OK),
    ("pip_installer-bad", {"pip_installer": "conda"}, (INVALID, "pip_installer")),
    ("dockerfile_lines", {"dockerfile_lines": ["RUN true"]}, OK),
    ("dockerfile_lines-bad", {"dockerfile_lines": "RUN true"}, (INVALID, "dockerfile_lines")),
    ("keep_pkg_tools", {"keep_pkg_tools": ["pip"]}, OK),
    ("keep_pkg_tools-bool", {"keep_pkg_tools": True}, OK),
    ("keep_pkg_tools-bad", {"keep_pkg_tools": ["npm"]}, (INVALID, "keep_pkg_tools")),
    ("source", {"source": {"kind": "uv", "root": "uvproj"}}, OK),
    ("source-missing-root", {"source": {"kind": "uv", "root": "nothere"}}, (MISSING, "source.root")),
    ("source-no-lock", {"source": {"kind": "uv", "root": "src"}}, (MISSING, "source.root")),
    ("source-with-dependencies", {"source": {"kind": "uv", "root": "uvproj"}, "dependencies": ["."]},
     (INVALID, "source")),
    ("source-kind", {"source": {"kind": "poetry"}}, (INVALID, "source.kind")),
    # -- refused top-level keys --
    ("node_version", {"node_version": "20"}, (REFUSED, "node_version")),
    ("ui", {"ui": {"chat": "./ui.tsx"}}, (REFUSED, "ui")),
    ("ui_config", {"ui_config": {"shared": []}}, (REFUSED, "ui_config")),
    ("encryption", {"encryption": {"path": "./enc.py:enc"}}, (REFUSED, "encryption")),
    ("project_root", {"project_root": "."}, (REFUSED, "project_root")),
    ("package", {"package": "x"}, (REFUSED, "package")),
    # -- store --
    ("store-empty", {"store": {}}, OK),
    ("store.index", {"store": {"index": {"dims": 3, "embed": "./embed.py:embed", "fields": ["text"]}}}, OK),
    ("store.index-module", {"store": {"index": {"dims": 3, "embed": "embed:embed"}}}, OK),
    ("store.index-missing-file", {"store": {"index": {"dims": 3, "embed": "./nope.py:embed"}}},
     (MISSING, "store.index.embed")),
    ("store.index-provider", {"store": {"index": {"dims": 1536, "embed": "openai:text-embedding-3-small"}}},
     (REFUSED, "store.index.embed") if importlib.util.find_spec("langchain") is None
     or importlib.util.find_spec("langchain_openai") is None else OK),
    ("store.index-provider-unknown", {"store": {"index": {"dims": 3, "embed": "nosuch:text-embed-1"}}},
     (REFUSED, "store.index.embed")),
    ("store.index-dims", {"store": {"index": {"dims": 0, "embed": "./embed.py:embed"}}},
     (INVALID, "store.index.dims")),
    ("store.index-fields", {"store": {"index": {"dims": 3, "embed": "./embed.py:embed", "fields": []}}},
     (INVALID, "store.index.fields")),
    ("store.index-type", {"store": {"index": {"dims": "3", "embed": "x"}}}, (INVALID, "store.index.dims")),
    ("store.ttl", {"store": {"ttl": {"default_ttl": 10, "refresh_on_read": False, "sweep_interval_minutes": 2}}},
     OK),
    ("store.ttl-negative", {"store": {"ttl": {"default_ttl": -1}}}, (INVALID, "store.ttl.default_ttl")),
    ("store.ttl-interval", {"store": {"ttl": {"sweep_interval_minutes": 0}}},
     (INVALID, "store.ttl.sweep_interval_minutes")),
    ("store.path", {"store": {"path": "./s.py:store"}}, (REFUSED, "store.path")),
    # -- checkpointer --
    ("checkpointer-default", {"checkpointer": {"backend": "default"}}, OK),
    ("checkpointer.ttl", {"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}}}, OK),
    ("checkpointer.ttl-keep_latest", {"checkpointer": {"ttl": {"strategy": "keep_latest", "default_ttl": 60,
                                                               "sweep_interval_minutes": 5, "sweep_limit": 10}}}, OK),
    ("checkpointer.ttl-negative", {"checkpointer": {"ttl": {"default_ttl": -1}}},
     (INVALID, "checkpointer.ttl.default_ttl")),
    ("checkpointer.ttl-interval", {"checkpointer": {"ttl": {"sweep_interval_minutes": 0}}},
     (INVALID, "checkpointer.ttl.sweep_interval_minutes")),
    ("checkpointer.ttl-limit", {"checkpointer": {"ttl": {"sweep_limit": 0}}},
     (INVALID, "checkpointer.ttl.sweep_limit")),
    ("checkpointer.path", {"checkpointer": {"path": "./c.py:saver"}}, (REFUSED, "checkpointer.path")),
    ("checkpointer.backend-mongo", {"checkpointer": {"backend": "mongo"}}, (REFUSED, "checkpointer.backend")),
    ("checkpointer.uri", {"checkpointer": {"uri": "mongodb://127.0.0.1"}}, (REFUSED, "checkpointer.backend")),
    ("checkpointer.serde.pickle_fallback-false", {"checkpointer": {"serde": {"pickle_fallback": False}}}, OK),
    ("checkpointer.serde.pickle_fallback", {"checkpointer": {"serde": {"pickle_fallback": True}}},
     (REFUSED, "checkpointer.serde.pickle_fallback")),
    ("checkpointer.serde.allowed_msgpack_modules-true",
     {"checkpointer": {"serde": {"allowed_msgpack_modules": True}}},
     (REFUSED, "checkpointer.serde.allowed_msgpack_modules")),
    ("checkpointer.serde.allowed_json_modules-list",
     {"checkpointer": {"serde": {"allowed_json_modules": [["my", "Type"]]}}},
     (REFUSED, "checkpointer.serde.allowed_json_modules")),
    # -- auth (shape only here) --
    ("auth", {"auth": {"path": "./auth.py:auth", "disable_studio_auth": True,
                       "openapi": {"securitySchemes": {"k": {"type": "apiKey"}}, "security": [{"k": []}]},
                       "cache": {"cache_keys": ["authorization"], "ttl_seconds": 60, "max_size": 10}}}, OK),
    ("auth-module-ref", {"auth": {"path": "my_auth_package.auth:auth", "allow_langsmith_api_keys": False}}, OK),
    ("auth.path-missing", {"auth": {"path": "./missing_auth.py:auth"}}, (MISSING, "auth.path")),
    ("auth.path-format", {"auth": {"path": "./auth.py"}}, (INVALID, "auth.path")),
    ("auth.path-required", {"auth": {}}, (INVALID, "auth.path")),
    ("auth-unknown-key", {"auth": {"path": "./auth.py:auth", "paht": 1}}, (UNKNOWN, "auth.paht")),
    ("auth.cache-type", {"auth": {"path": "./auth.py:auth", "cache": {"max_size": -1}}},
     (INVALID, "auth.cache.max_size")),
    # -- http --
    ("http.cors", {"http": {"cors": {"allow_origins": ["https://app.example"], "allow_methods": ["GET", "POST"],
                                     "allow_headers": ["content-type"], "allow_credentials": True,
                                     "expose_headers": ["x-a"], "max_age": 60}}}, OK),
    ("http.cors.allow_origin_regex", {"http": {"cors": {"allow_origin_regex": "https://.*[.]example"}}}, OK),
    ("http.cors-bad-regex", {"http": {"cors": {"allow_origin_regex": "("}}},
     (INVALID, "http.cors.allow_origin_regex")),
    ("http.cors-type", {"http": {"cors": {"allow_origins": "https://a"}}}, (INVALID, "http.cors.allow_origins")),
    ("http.cors-max_age", {"http": {"cors": {"max_age": -1}}}, (INVALID, "http.cors.max_age")),
    ("http.app", {"http": {"app": "./webapp.py:app"}}, OK),
    ("http.app-missing", {"http": {"app": "./nope.py:app"}}, (MISSING, "http.app")),
    ("http.app-format", {"http": {"app": "./webapp.py"}}, (INVALID, "http.app")),
    ("http.app-js", {"http": {"app": "./app.ts:app"}}, (REFUSED, "http.app")),
    ("http.disable_webhooks", {"http": {"disable_webhooks": True}}, OK),
    ("http.configurable_headers", {"http": {"configurable_headers": {"includes": ["x-*"],
                                                                      "excludes": ["x-api-key"]}}}, OK),
    ("http.configurable_headers-bad", {"http": {"configurable_headers": {"includes": ["x-(a|b)"]}}},
     (INVALID, "http.configurable_headers.includes[0]")),
    ("http.logging_headers-excludes", {"http": {"logging_headers": {"excludes": ["authorization"]}}}, OK),
    ("http.logging_headers-includes", {"http": {"logging_headers": {"includes": ["x-a"]}}},
     (REFUSED, "http.logging_headers")),
    ("http.middleware_order", {"http": {"middleware_order": "auth_first"}}, OK),
    ("http.middleware_order-bad", {"http": {"middleware_order": "first"}}, (INVALID, "http.middleware_order")),
    ("http.enable_custom_route_auth", {"http": {"enable_custom_route_auth": True}}, OK),
    ("http.mount_prefix", {"http": {"mount_prefix": "/api"}}, OK),
    ("http.mount_prefix-relative", {"http": {"mount_prefix": "api"}}, (INVALID, "http.mount_prefix")),
    ("http-unknown-key", {"http": {"corss": {}}}, (UNKNOWN, "http.corss")),
    ("http.disable_bool-type", {"http": {"disable_threads": "yes"}}, (INVALID, "http.disable_threads")),
    # -- webhooks --
    ("webhooks", {"webhooks": {"url": {"require_https": True, "allowed_domains": ["hooks.example", "*.corp.example"],
                                       "allowed_ports": [443], "max_url_length": 500, "disable_loopback": True,
                                       "disable_private_ips": True},
                               "allowed_fields": ["run_id", "status", "values"]}}, OK),
    ("webhooks.url.allowed_domains-bad", {"webhooks": {"url": {"allowed_domains": ["a.*.b"]}}},
     (INVALID, "webhooks.url.allowed_domains[0]")),
    ("webhooks.url.allowed_ports-bad", {"webhooks": {"url": {"allowed_ports": [70000]}}},
     (INVALID, "webhooks.url.allowed_ports[0]")),
    ("webhooks.url-unknown", {"webhooks": {"url": {"require_http": True}}}, (UNKNOWN, "webhooks.url.require_http")),
    ("webhooks.allowed_fields-bad", {"webhooks": {"allowed_fields": ["password"]}},
     (INVALID, "webhooks.allowed_fields")),
    ("webhooks.headers-literal", {"webhooks": {"headers": {"X-Token": "abc"}}}, OK),
    ("webhooks.headers-unset-var", {"webhooks": {"headers": {"X-Token": "${{ env.LG_WEBHOOK_SG_UNSET }}"}}},
     (INVALID, "webhooks.headers.X-Token")),
    ("webhooks.headers-prefix", {"webhooks": {"headers": {"X-Token": "${{ env.HOME }}"}}},
     (INVALID, "webhooks.headers.X-Token")),
    ("webhooks.env_prefix", {"webhooks": {"env_prefix": "SG_CFG_", "headers": {"X-T": "t-${{ env.SG_CFG_TOK }}"}},
                             "env": {"SG_CFG_TOK": "secret"}}, OK),
    ("webhooks.headers-bad-name", {"webhooks": {"headers": {"X Token": "a"}}}, (INVALID, "webhooks.headers.X Token")),
    # -- unknown keys --
    ("unknown-key", {"htpp": {}}, (UNKNOWN, "htpp")),
    ("disable_persistence", {"disable_persistence": True}, (UNKNOWN, "disable_persistence")),
]

_TOGGLES = ["disable_assistants", "disable_threads", "disable_runs", "disable_store", "disable_meta",
            "disable_mcp", "disable_a2a"]
CASES += [(f"http.{k}-false", {"http": {k: False}}, OK) for k in _TOGGLES]
CASES += [(f"http.{k}", {"http": {k: True}}, OK) for k in _TOGGLES]
CASES += [("http.disable_ui", {"http": {"disable_ui": True}}, OK),
          ("http.disable_ui-false", {"http": {"disable_ui": False}}, (REFUSED, "http.disable_ui")),
          ("http.studio", {"http": {"studio": True}}, OK),
          ("http.studio-false", {"http": {"studio": False}}, OK),
          ("http.studio-bad", {"http": {"studio": "yes please"}}, (INVALID, "http.studio"))]


@pytest.mark.parametrize(("extra", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_config_key(tmp_path: Path, extra: dict[str, Any], expected: Any) -> None:
    got = outcome(tmp_path, extra)
    if expected == OK:
        assert not isinstance(got, tuple), got
    else:
        assert got == expected


def test_every_schema_key_has_a_case() -> None:
    """No key of the schema goes untested (top level and one level down)."""
    from stepgraph.server.config_schema import Config

    def keys(extra: dict[str, Any], prefix: str = "") -> set[str]:
        out = set()
        for k, v in extra.items():
            out.add(prefix + k)
            if isinstance(v, dict) and prefix == "":
                out |= keys(v, k + ".")
        return out

    covered: set[str] = set()
    for _, extra, _ in CASES:
        covered |= keys(extra)
    top = {f.alias or n for n, f in Config.model_fields.items()}
    assert top <= covered | {"graphs"}, top - covered
    for section in ("http", "store", "checkpointer", "auth", "webhooks"):
        model = Config.model_fields[section].annotation.__args__[0]  # X | None
        nested = {f"{section}.{f.alias or n}" for n, f in model.model_fields.items()}
        assert nested <= covered, nested - covered


def test_all_problems_listed_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(write_config(tmp_path, {"ui": {}, "node_version": "20", "env": "nope.env"}))
    keys = {p.key for p in info.value.problems}
    assert keys == {"ui", "node_version", "env"}
    text = str(info.value)
    assert "3 problems" in text and "nope.env" in text and "hint:" in text


def test_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"did you mean `dependencies`"):
        load_settings(write_config(tmp_path, {"dependecies": ["."]}))
    with pytest.raises(ConfigError, match=r"did you mean `allow_origins`"):
        load_settings(write_config(tmp_path, {"http": {"cors": {"allow_origin": ["x"]}}}))


def test_refusal_says_not_supported_yet(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"`http.disable_ui`: generative UI .* is not supported yet"):
        load_settings(write_config(tmp_path, {"http": {"disable_ui": False}}))


def test_build_time_keys_are_logged(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, {
        "python_version": "3.12", "dockerfile_lines": ["RUN true"], "base_image": "img",
        "dependencies": ["sg-not-installed-pkg"]}))
    notes = "\n".join(settings.notes)
    for key in ("python_version", "dockerfile_lines", "base_image", "dependencies[0]"):
        assert f"`{key}`" in notes
    assert "build-time" in notes and "pip install" in notes


def test_env_file_parsed(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, {"env": ".env"}))
    assert settings.env == {"SG_CFG_A": "1", "SG_CFG_B": "two words"}


def test_settings_of_honoured_keys(tmp_path: Path) -> None:
    os.environ["LG_WEBHOOK_SG_TEST_TOKEN"] = "tok"
    try:
        settings = load_settings(write_config(tmp_path, {
            "graphs": {"g": {"path": "./g.py:graph", "description": "adds one"}},
            "dependencies": ["./src"],
            "auth": {"path": "./auth.py:auth"},
            "http": {"cors": {"allow_origins": ["https://app.example"]}, "disable_webhooks": True},
            "webhooks": {"url": {"disable_loopback": False}, "headers": {"Authorization": "Bearer ${{ env.LG_WEBHOOK_SG_TEST_TOKEN }}"}},
        }))
    finally:
        del os.environ["LG_WEBHOOK_SG_TEST_TOKEN"]
    assert settings.graphs == {"g": "./g.py:graph"} and settings.graph_descriptions == {"g": "adds one"}
    assert settings.dependencies == [(tmp_path / "src").resolve()]
    assert settings.auth is not None and settings.auth.path == "./auth.py:auth"
    assert settings.cors is not None and settings.cors.allow_origins == ["https://app.example"]
    hooks = settings.webhooks
    assert hooks.disabled and hooks.allow_loopback and not hooks.allow_private and hooks.require_https
    assert hooks.headers == {"Authorization": "Bearer tok"}


def test_create_app_applies_dependencies_env_and_descriptions(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from stepgraph.server.app import create_app

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "sg_cfg_helper_mod.py").write_text("VALUE = 41\n")
    (tmp_path / "g2.py").write_text(GRAPH.replace("s['x'] + 1", "s['x'] + sg_cfg_helper_mod.VALUE")
                                    .replace("from typing_extensions", "import sg_cfg_helper_mod\nfrom typing_extensions"))
    path = write_config(tmp_path, {"graphs": {"g": {"path": "./g2.py:graph", "description": "adds 41"}},
                                   "dependencies": ["./src"], "env": {"SG_CFG_APPLIED": "yes"}})
    settings = load_settings(path, database_url=str(tmp_path / "db.sqlite"))
    try:
        app = create_app(settings)
        assert os.environ["SG_CFG_APPLIED"] == "yes"
        with TestClient(app, base_url="http://127.0.0.1:2024") as client:
            found = client.post("/assistants/search", json={"graph_id": "g"}).json()
            assert [a["description"] for a in found] == ["adds 41"]
            out = client.post("/runs/wait", json={"assistant_id": "g", "input": {"x": 1}}).json()
            assert out == {"x": 42}
    finally:
        os.environ.pop("SG_CFG_APPLIED", None)
        sys.modules.pop("sg_cfg_helper_mod", None)
        if str((tmp_path / "src").resolve()) in sys.path:
            sys.path.remove(str((tmp_path / "src").resolve()))


def test_description_follows_the_config(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from stepgraph.server.app import create_app

    db = str(tmp_path / "db.sqlite")
    for description in ("first", "second"):
        path = write_config(tmp_path, {"graphs": {"g": {"path": "./g.py:graph", "description": description}}})
        with TestClient(create_app(load_settings(path, database_url=db)), base_url="http://localhost") as client:
            found = client.post("/assistants/search", json={"graph_id": "g"}).json()
            assert [a["description"] for a in found] == [description]


def test_unknown_override_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="hots"):
        load_settings(write_config(tmp_path, {}), hots="x")
