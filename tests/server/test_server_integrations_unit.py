"""Unit checks of the integrations' pieces: header patterns, route groups, the store sweep,
and start-up refusals of a broken ``http.app`` / ``store.index.embed`` (naming the key)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stepgraph.server.config_errors import ConfigError
from stepgraph.server.config_http import HeaderPatterns
from stepgraph.server.routes import route_group
from stepgraph.server.runtime.store_sweep import sweeping


def test_header_patterns() -> None:
    rules = HeaderPatterns(("x-user-*", "Authorization"), ("x-user-secret",))
    picked = rules.select([("X-User-Id", "1"), ("x-user-secret", "s"), ("authorization", "a"), ("x-other", "o")])
    assert picked == {"x-user-id": "1", "authorization": "a"}
    assert HeaderPatterns((), ("authorization",)).select({"a": "1", "authorization": "x"}) == {"a": "1"}
    assert HeaderPatterns().select({"a": "1"}) == {}
    assert HeaderPatterns(("x.y",)).select({"xzy": "1"}) == {}  # only `*` is special


@pytest.mark.parametrize(("path", "group"), [
    ("/ok", None), ("/info", "meta"), ("/openapi.json", "meta"), ("/docs", "meta"),
    ("/assistants/search", "assistants"), ("/threads", "threads"), ("/threads/{thread_id}/state", "threads"),
    ("/threads/{thread_id}/runs/wait", "runs"), ("/runs/wait", "runs"), ("/store/items", "store"),
    ("/mcp", "mcp"), ("/a2a/{assistant_id}", "a2a"), ("/.well-known/agent-card.json", "a2a"),
])
def test_route_groups(path: str, group: str | None) -> None:
    assert route_group(path) == group


async def test_store_sweep_runs_in_the_background() -> None:
    calls: list[int] = []

    class Store:
        async def asweep_ttl(self) -> int:
            calls.append(1)
            return 1

    async with sweeping(Store(), 0.0002):  # about 12 ms
        for _ in range(200):
            if len(calls) >= 2:
                break
            await asyncio.sleep(0.01)
    assert len(calls) >= 2
    async with sweeping(Store(), None):
        pass


def _create(tmp: Path, extra: dict) -> None:
    from stepgraph.server import create_app
    from stepgraph.server.settings import load_settings

    (tmp / "g.py").write_text("from stepgraph.graph import START, StateGraph\nfrom typing_extensions import TypedDict\n"
                              "class S(TypedDict):\n    x: int\n"
                              "graph = StateGraph(S).add_node('n', lambda s: s).add_edge(START, 'n')\n")
    (tmp / "bad.py").write_text("app = 3\nembed = 'not callable'\nclass E:\n    pass\nobj = E()\n")
    (tmp / "langgraph.json").write_text(json.dumps({"graphs": {"g": "./g.py:graph"}, **extra}))
    create_app(load_settings(tmp / "langgraph.json", database_url=str(tmp / "db.sqlite")))


@pytest.mark.parametrize(("extra", "key"), [
    ({"http": {"app": "./bad.py:app"}}, "http.app"),
    ({"http": {"app": "./bad.py:missing"}}, "http.app"),
    ({"store": {"index": {"dims": 3, "embed": "./bad.py:obj"}}}, "store.index.embed"),
    ({"store": {"index": {"dims": 3, "embed": "./bad.py:missing"}}}, "store.index.embed"),
    ({"store": {"index": {"dims": 3, "embed": "sg-no-such-provider:model"}}}, "store.index.embed"),
])
def test_broken_reference_refuses_at_start_up(tmp_path: Path, extra: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        _create(tmp_path, extra)


def test_numpy_scores_equal_python_scores() -> None:
    pytest.importorskip("numpy")
    import random

    from stepgraph.store._embed import best_scores

    rng = random.Random(7)
    groups = [[[rng.uniform(-1, 1) for _ in range(8)] for _ in range(rng.randint(1, 3))] for _ in range(100)]
    groups.append([[0.0] * 8])
    query = [rng.uniform(-1, 1) for _ in range(8)]
    fast = best_scores(query, groups, use_numpy=True)
    slow = best_scores(query, groups, use_numpy=False)
    assert fast == pytest.approx(slow, abs=1e-9) and fast[-1] == 0.0
    assert best_scores(query, [[[1.0, 2.0]]], use_numpy=True) == best_scores(query, [[[1.0, 2.0]]], use_numpy=False)
