"""``UntrackedValue`` keys are never stored, not even inside a ``Send``'s argument."""

from __future__ import annotations

import operator
import threading
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.channels import UntrackedValue
from stepgraph.graph import START, StateGraph
from stepgraph.types import Send


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class Resource:
    """Cannot be serialized (holds a lock, and is a local-looking class to the allow-list)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()


class S(TypedDict):
    log: Annotated[list[str], operator.add]
    resource: Annotated[Resource, UntrackedValue]


def test_send_carrying_an_untracked_value(driver, saver):
    """A node sends the whole state (with its untracked resource) to another node: the
    target gets the resource, and nothing unserializable reaches the checkpointer."""

    def setup(state: S) -> dict:
        return {"log": ["setup"], "resource": Resource("first")}

    def tool(state: S) -> dict:
        assert isinstance(state["resource"], Resource)
        return {"log": [f"used {state['resource'].name}"], "resource": Resource("second")}

    g = StateGraph(S)
    g.add_node("setup", setup)
    g.add_node("tool", tool)
    g.add_edge(START, "setup")
    g.add_conditional_edges("setup", lambda s: [Send("tool", s)])
    app = g.compile(checkpointer=saver)
    config = cfg()
    out = driver.invoke(app, {"log": []}, config)
    assert out["log"] == ["setup", "used first"]
    assert out["resource"].name == "second"
    values = get_state(driver, app, config).values
    assert values == {"log": ["setup", "used first"]}
