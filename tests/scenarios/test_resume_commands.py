"""Resuming with a ``Command``: at a static breakpoint, after several interrupts of one
node or of ``@task`` calls, with an update given while resuming; cached ``@task`` results
cleared with ``clear_cache``.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.cache.memory import InMemoryCache
from stepgraph.errors import InvalidUpdateError
from stepgraph.func import entrypoint, task
from stepgraph.graph import START, StateGraph
from stepgraph.types import CachePolicy, Command, interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    foo: Annotated[str, operator.add]


def _two_nodes(saver, **kw):
    g = StateGraph(S)
    g.add_node("n1", lambda s: {"foo": "|n1"})
    g.add_node("n2", lambda s: {"foo": "|n2"})
    g.add_edge(START, "n1")
    g.add_edge("n1", "n2")
    return g.compile(checkpointer=saver, **kw)


def test_resume_at_a_static_breakpoint_continues(driver, saver):
    app = _two_nodes(saver, interrupt_before=["n1"])
    c = cfg()
    assert driver.invoke(app, {"foo": "abc"}, c) == {"foo": "abc"}
    assert driver.invoke(app, Command(resume="go"), c) == {"foo": "abc|n1|n2"}


def test_goto_at_a_static_breakpoint_runs_the_pending_node_too(driver, saver):
    app = _two_nodes(saver, interrupt_before=["n1"])
    c = cfg()
    driver.invoke(app, {"foo": "abc"}, c)
    assert driver.invoke(app, Command(goto=["n2"]), c) == {"foo": "abc|n1|n2|n2"}


def test_update_given_while_resuming_is_kept_for_the_next_resume(driver, saver):
    def node(s):
        first = interrupt("one")
        second = interrupt("two")
        return {"foo": f"{first} {second}"}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"foo": "DE"}, c)
    out = driver.stream(app, Command(resume="a1", update={"foo": " upd "}), c)
    assert [i.value for i in out[0]["__interrupt__"]] == ["two"]
    chunks = driver.stream(app, Command(resume="a2"), c, stream_mode="values")
    assert chunks == [{"foo": "DE upd "}, {"foo": "DE upd a1 a2"}]


def test_task_interrupts_resume_one_at_a_time(driver, saver):
    @task
    def add(state: dict, suffix: str) -> dict:
        return {"a": state["a"] + suffix}

    @task
    def ask(state: dict) -> dict:
        return {"a": state["a"] + interrupt("value?")}

    @entrypoint(checkpointer=saver)
    def flow(inputs: dict) -> dict:
        r = add(inputs, "x").result()
        r = ask(r).result()
        return ask(r).result()

    c = cfg()
    first = driver.invoke(flow, {"a": ""}, c)
    assert [i.value for i in first["__interrupt__"]] == ["value?"]
    second = driver.invoke(flow, Command(resume="1"), c)
    assert [i.value for i in second["__interrupt__"]] == ["value?"]
    assert driver.invoke(flow, Command(resume="2"), c) == {"a": "x12"}


def test_cached_task_recomputes_after_clear_cache(driver, saver):
    calls = []

    @task(cache_policy=CachePolicy())
    def double(x: int) -> int:
        calls.append(x)
        return 2 * x

    cache = InMemoryCache()

    @entrypoint(checkpointer=saver, cache=cache)
    def flow(n: int) -> list:
        return [double(n).result(), double(n + 1).result()]

    assert driver.invoke(flow, 1, cfg()) == [2, 4]
    assert driver.invoke(flow, 1, cfg()) == [2, 4]
    assert calls == [1, 2]
    double.clear_cache(cache)
    assert driver.invoke(flow, 1, cfg()) == [2, 4]
    assert calls == [1, 2, 1, 2]


@pytest.mark.stepgraph_only
def test_resume_of_a_finished_thread_is_refused(driver, saver):
    app = _two_nodes(saver)
    c = cfg()
    driver.invoke(app, {"foo": "x"}, c)
    with pytest.raises(InvalidUpdateError) as err:
        driver.invoke(app, Command(resume="late"), c)
    assert err.value.code == "SG321"
