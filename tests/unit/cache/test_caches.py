"""Caches and ``CachePolicy``: hits skip nodes, TTLs expire, failures are never cached."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TypedDict

import pytest

from stepgraph.cache.memory import InMemoryCache
from stepgraph.cache.sqlite import SqliteCache
from stepgraph.func import entrypoint, task
from stepgraph.graph import START, StateGraph
from stepgraph.types import CachePolicy


@pytest.fixture(params=["memory", "sqlite"])
def cache(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "memory":
        return InMemoryCache()
    return SqliteCache(path=str(tmp_path / "cache.db"))


class S(TypedDict):
    x: int
    y: int


def test_get_set_clear_round_trip(cache) -> None:
    """Values come back equal; clearing a namespace drops only its keys."""
    cache.set({(("a",), "k"): ({"v": [1, 2]}, None), (("b",), "k"): ((1, "t"), None)})
    assert cache.get([(("a",), "k"), (("b",), "k"), (("c",), "k")]) == {
        (("a",), "k"): {"v": [1, 2]},
        (("b",), "k"): (1, "t"),
    }
    cache.clear([("a",)])
    assert cache.get([(("a",), "k"), (("b",), "k")]) == {(("b",), "k"): (1, "t")}
    cache.clear()
    assert cache.get([(("b",), "k")]) == {}


def test_ttl_expires(cache) -> None:
    """An entry with a TTL is gone once the TTL passed."""
    cache.set({(("a",), "k"): ("v", 0.05)})
    assert cache.get([(("a",), "k")]) == {(("a",), "k"): "v"}
    time.sleep(0.08)
    assert cache.get([(("a",), "k")]) == {}


def test_cached_node_is_skipped_and_marked(cache) -> None:
    """A second run with the same input reuses the writes and marks the update as cached."""
    calls: list[int] = []

    def double(state: S) -> dict:
        calls.append(state["x"])
        return {"y": state["x"] * 2}

    g = StateGraph(S)
    g.add_node("double", double, cache_policy=CachePolicy())
    g.add_edge(START, "double")
    app = g.compile(cache=cache)
    assert app.invoke({"x": 2}) == {"x": 2, "y": 4}
    assert list(app.stream({"x": 2}, stream_mode="updates")) == [
        {"double": {"y": 4}, "__metadata__": {"cached": True}}
    ]
    assert app.invoke({"x": 3}) == {"x": 3, "y": 6}
    assert calls == [2, 3]
    app.clear_cache()
    app.invoke({"x": 2})
    assert calls == [2, 3, 2]


def test_failing_node_is_never_cached(cache) -> None:
    """A node that raised runs again next time (LangGraph can cache the failure)."""
    calls: list[int] = []

    def flaky(state: S) -> dict:
        calls.append(state["x"])
        if len(calls) == 1:
            raise ValueError("first call fails")
        return {"y": 1}

    g = StateGraph(S)
    g.add_node("flaky", flaky, cache_policy=CachePolicy(ttl=60))
    g.add_edge(START, "flaky")
    app = g.compile(cache=cache)
    with pytest.raises(ValueError):
        app.invoke({"x": 1})
    assert app.invoke({"x": 1}) == {"x": 1, "y": 1}
    assert calls == [1, 1]


def test_clear_cache_without_cache_raises() -> None:
    """clear_cache on a graph compiled without a cache is a ValueError."""
    g = StateGraph(S)
    g.add_node("n", lambda s: {"y": 1})
    g.add_edge(START, "n")
    with pytest.raises(ValueError, match="No cache is set"):
        g.compile().clear_cache()


def test_functional_task_results_are_cached(cache) -> None:
    """A cached @task runs once per distinct argument across entrypoint runs."""
    calls: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    @entrypoint(cache=cache)
    def wf(xs: list[int]) -> list[int]:
        return [square(x).result() for x in xs]

    assert wf.invoke([1, 2]) == [1, 4]
    assert wf.invoke([2, 3]) == [4, 9]
    assert calls == [1, 2, 3]
