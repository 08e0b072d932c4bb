"""The savers' memories stay within their byte budgets after large runs, and reads stay exact.

Regression of issue 10 (section 3): the SQL savers' caches were bounded by entry counts only
(4096 list tips each holding a whole list, 4096 row tips, 4096 packed rows, 100 000 thread
keys), so a few large threads could hold gigabytes. Every cache now counts the encoded bytes
of its entries (``STEPGRAPH_SAVER_CACHE_BYTES``, split by ``_lru.SHARES``) and drops the
least recently used ones first; a dropped entry costs a query or a snapshot, never a wrong
read. Run on SQLite, PostgreSQL and the memory saver.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.checkpoint._lru import ENTRY_OVERHEAD, SHARES, Lru, cache_budgets, parse_bytes
from stepgraph.graph import END, START, StateGraph

BUDGET = 256 * 1024
THREADS = 12
STEPS = 8
ITEM = 6000
"""Bytes of each list element: every thread's list outgrows the whole budget."""


class State(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    big: str
    n: int


def _step(state: State) -> dict[str, Any]:
    n = state.get("n", 0) + 1
    return {"items": [f"{n}:" + "m" * ITEM], "big": f"{n}:" + "b" * ITEM, "n": n}


def _graph(saver: Any) -> Any:
    return (
        StateGraph(State)
        .add_node("step", _step)
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: "step" if s["n"] < STEPS else END, ["step", END])
        .compile(checkpointer=saver)
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "memory"])
def saver(
    request: pytest.FixtureRequest, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    monkeypatch.setenv("STEPGRAPH_SAVER_CACHE_BYTES", "256KiB")
    if request.param == "sqlite":
        from stepgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as s:
            yield s
    elif request.param == "postgres":
        from stepgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_dsn")) as s:
            s.setup()
            yield s
    else:
        from stepgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()


def _usage_within_budget(codec: Any) -> dict[str, tuple[int, int, int]]:
    usage = codec.cache_usage()
    for name, (_entries, spent, budget) in usage.items():
        assert budget == BUDGET * SHARES[name] // 100, name
        assert spent <= budget, f"{name}: {spent} bytes held, budget {budget}"
    return usage


def test_caches_hold_their_budget_after_large_runs(saver: Any) -> None:
    graph = _graph(saver)
    threads = [
        f"thread-{i}-" + "t" * (60 if i % 2 else 0) for i in range(THREADS)
    ]  # long ids get keys
    for tid in threads:
        graph.invoke({"items": ["start"]}, {"configurable": {"thread_id": tid}})
        _usage_within_budget(saver._codec)
    usage = _usage_within_budget(saver._codec)
    assert usage["lists"][0] < THREADS  # the budget, not the count, bounded the list tips
    for tid in threads:  # cold entries cost queries, never a wrong value
        state = graph.get_state({"configurable": {"thread_id": tid}})
        assert state.values["n"] == STEPS and len(state.values["items"]) == STEPS + 1
        assert state.values["items"][-1] == f"{STEPS}:" + "m" * ITEM
        history = list(graph.get_state_history({"configurable": {"thread_id": tid}}))
        assert [h.values.get("n") for h in history[:3]] == [STEPS, STEPS - 1, STEPS - 2]
    _usage_within_budget(saver._codec)
    # the next turn of a thread whose tips were dropped still stores and reads exactly
    graph.invoke({"items": ["more"]}, {"configurable": {"thread_id": threads[0]}})
    state = graph.get_state({"configurable": {"thread_id": threads[0]}})
    assert state.values["items"][STEPS + 1 :] == ["more", f"{STEPS + 1}:" + "m" * ITEM]
    assert state.values["n"] == STEPS + 1
    _usage_within_budget(saver._codec)


def test_lru_counts_what_it_holds() -> None:
    lru = Lru(1000, max_items=5)
    for i in range(20):
        lru.put(i, b"x" * 100, 100 + ENTRY_OVERHEAD)
        assert lru.spent <= 1000 and lru.spent == (100 + ENTRY_OVERHEAD) * len(lru)
    assert list(lru) == [14, 15, 16, 17, 18, 19][-len(lru) :]
    lru.put("huge", b"", 5000)  # larger than the budget: not kept, nothing evicted for it
    assert "huge" not in lru and len(lru) > 0
    assert lru.pop(19) == b"x" * 100 and 19 not in lru
    lru.drop(lambda k: True)
    assert lru.spent == 0 and len(lru) == 0


def test_lru_get_many_and_pop() -> None:
    lru = Lru(1000)
    for key in "abc":
        lru.put(key, key.upper(), 10)
    found, missing = lru.get_many(["a", "x", "c"])
    assert found == {"a": "A", "c": "C"} and missing == ["x"]
    assert list(lru) == ["b", "a", "c"]  # hits became the most recently used
    assert lru.pop("x") is None and lru.pop("b") == "B" and lru.spent == 20


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        parse_bytes("8MiB") == 8 << 20
        and parse_bytes("512k") == 512 << 10
        and parse_bytes("100") == 100
    )
    monkeypatch.setenv("STEPGRAPH_SAVER_CACHE_BYTES", "1MiB")
    assert (
        sum(cache_budgets().values()) <= 1 << 20
        and cache_budgets()["lists"] == (1 << 20) * SHARES["lists"] // 100
    )
    monkeypatch.setenv("STEPGRAPH_SAVER_CACHE_BYTES", "lots")
    with pytest.raises(ValueError, match="STEPGRAPH_SAVER_CACHE_BYTES"):
        cache_budgets()
