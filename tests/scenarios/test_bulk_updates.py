"""``bulk_update_state`` replays a run: updates as ``__input__``/``__start__``/nodes give
the same history as the run itself (steps, next tasks, task results), and ``__copy__``
with a list of updates forks a checkpoint and updates the fork.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Send, StateUpdate


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def _history(driver, app, config):
    if driver.is_async:

        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def _bulk(driver, app, config, supersteps):
    if driver.is_async:
        return asyncio.run(app.abulk_update_state(config, supersteps))
    return app.bulk_update_state(config, supersteps)


def _rows(hist):
    return [(s.values, s.next, s.metadata["step"], [(t.name, t.result) for t in s.tasks])
            for s in hist]


class S(TypedDict):
    foo: str
    items: Annotated[list, operator.add]


def _fanout(saver):
    def fan(s):
        return Command(goto=[Send("work", {"i": 0}), Send("work", {"i": 1})], update={"foo": "fan"})

    g = StateGraph(S)
    g.add_node("agent", lambda s: {"foo": "agent"})
    g.add_node("fan", fan)
    g.add_node("work", lambda arg: {"items": [arg["i"]]})
    g.add_edge(START, "agent")
    g.add_edge("agent", "fan")
    return g.compile(checkpointer=saver)


def test_updates_replaying_a_run_give_its_history(driver, saver):
    app = _fanout(saver)
    ran = cfg()
    assert driver.invoke(app, {"foo": "in", "items": []}, ran) == {"foo": "fan", "items": [0, 1]}
    built = cfg()
    _bulk(driver, app, built, [
        [StateUpdate({"foo": "in", "items": []}, "__input__")],
        [StateUpdate({"foo": "in", "items": []}, "__start__")],
        [StateUpdate({"foo": "agent"}, "agent")],
        [StateUpdate(Command(goto=[Send("work", {"i": 0}), Send("work", {"i": 1})],
                             update={"foo": "fan"}), "fan")],
        [StateUpdate({"items": [0]}, "work"), StateUpdate({"items": [1]}, "work")],
    ])
    rows = _rows(_history(driver, app, built))
    assert rows == _rows(_history(driver, app, ran))
    assert [r[2] for r in rows] == [3, 2, 1, 0, -1]
    assert rows[-1][3] == [("__start__", {"foo": "in", "items": []})]
    assert rows[1][3] == [("work", {"items": [0]}), ("work", {"items": [1]})]
    assert get_state(driver, app, built).values == {"foo": "fan", "items": [0, 1]}


def test_input_update_on_a_used_thread_is_the_next_step(driver, saver):
    app = _fanout(saver)
    c = cfg()
    driver.invoke(app, {"foo": "in", "items": []}, c)
    _bulk(driver, app, c, [[StateUpdate({"foo": "again"}, "__input__")]])
    st = get_state(driver, app, c)
    assert (st.next, st.metadata["step"], st.metadata["source"]) == (("__start__",), 4, "input")


def test_copy_with_updates_forks_and_updates_the_fork(driver, saver):
    g = StateGraph(S)
    g.add_node("one", lambda s: {"items": ["one"]})
    g.add_node("two", lambda s: {"items": ["two"]})
    g.add_edge(START, "one")
    g.add_edge("one", "two")
    app = g.compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"foo": "", "items": ["start"]}, c)
    before_one = next(s for s in _history(driver, app, c) if s.next == ("one",))
    forked = _bulk(driver, app, before_one.config,
                   [[StateUpdate([StateUpdate({"items": ["one*"]}, "one")], "__copy__")]])
    assert driver.invoke(app, None, forked) == {"foo": "", "items": ["start", "one*", "two"]}
    hist = _history(driver, app, c)
    fork = next(s for s in hist if s.metadata["source"] == "fork")
    assert fork.parent_config == before_one.parent_config
    assert [(t.name, t.result) for t in fork.tasks] == [("one", {"items": ["one*"]})]
    assert [(t.name, t.result) for t in before_one.tasks] == [("one", {"items": ["one"]})]


def test_copy_cannot_share_its_superstep(driver, saver):
    app = _fanout(saver)
    c = cfg()
    driver.invoke(app, {"foo": "in", "items": []}, c)
    with pytest.raises(InvalidUpdateError):
        _bulk(driver, app, c, [[StateUpdate(None, "__copy__"), StateUpdate({"foo": "x"}, "agent")]])
    with pytest.raises(InvalidUpdateError):
        _bulk(driver, app, c, [[StateUpdate(None, "__end__"), StateUpdate(None, "__copy__")]])
