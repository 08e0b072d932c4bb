"""A node that runs a subgraph and returns its output hands the parent the subgraph's
whole state: keys of that state the parent lacks are dropped, as for a subgraph node;
any other unknown key stays an error (SG205).

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, interrupt


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class Sub(TypedDict):
    foo: str
    extra: str


class Parent(TypedDict):
    foo: str
    count: int


def _sub(**kw):
    def ask(s):
        answer = interrupt("value?")
        return {"foo": f"sub:{answer}", "extra": answer}

    g = StateGraph(Sub)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    return g.compile(**kw)


SUB = _sub(checkpointer=True)


def _call_sub(state: Parent):
    return SUB.invoke(state)


def test_node_returning_its_subgraphs_output_keeps_shared_keys(driver, saver):
    g = StateGraph(Parent)
    g.add_node("call", _call_sub)
    g.add_edge(START, "call")
    app = g.compile(checkpointer=saver)
    c = cfg()
    first = driver.invoke(app, {"foo": "", "count": 0}, c)
    assert [i.value for i in first["__interrupt__"]] == ["value?"]
    assert driver.invoke(app, Command(resume="a"), c) == {"foo": "sub:a", "count": 0}


@pytest.mark.stepgraph_only
def test_other_unknown_keys_stay_an_error(driver, saver):
    def call(state: Parent):
        out = SUB.invoke(state)
        return {**out, "typo": 1}

    g = StateGraph(Parent)
    g.add_node("call", call)
    g.add_edge(START, "call")
    app = g.compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"foo": "", "count": 0}, c)
    with pytest.raises(InvalidUpdateError) as err:
        driver.invoke(app, Command(resume="a"), c)
    assert err.value.code == "SG205" and "typo" in str(err.value)
