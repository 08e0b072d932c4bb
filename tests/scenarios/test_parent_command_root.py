"""``Command(graph=Command.PARENT)`` from a root graph: the run fails with the command
itself (a ``ParentCommand``, as in LangGraph), also with a step timeout in force; in
stepgraph it is the coded error SG241 too.

Each scenario runs on every driver (sync/async) x saver (memory, sqlite, postgres).
"""

from __future__ import annotations

import time

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError, ParentCommand
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    value: str


def _graph(saver, step_timeout):
    def node(s):
        time.sleep(0.05)
        return Command(graph=Command.PARENT, goto="elsewhere", update={"key": "v"})

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=saver)
    if step_timeout:
        app.step_timeout = step_timeout
    return app


@pytest.mark.parametrize("step_timeout", [None, 2])
def test_parent_command_leaves_the_root_graph(driver, saver, step_timeout):
    app = _graph(saver, step_timeout)
    with pytest.raises(ParentCommand) as err:
        driver.invoke(app, {"value": "x"}, cfg())
    assert err.value.args[0].goto == "elsewhere"
    assert err.value.args[0].update == {"key": "v"}


@pytest.mark.stepgraph_only
def test_parent_command_at_the_root_is_coded(driver, saver):
    app = _graph(saver, None)
    with pytest.raises(InvalidUpdateError) as err:
        driver.invoke(app, {"value": "x"}, cfg())
    assert err.value.code == "SG241" and "no parent graph" in str(err.value)
