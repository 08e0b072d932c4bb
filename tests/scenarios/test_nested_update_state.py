"""update_state and history addressed at a subgraph's namespace change that subgraph."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, interrupt


class S(TypedDict):
    log: Annotated[list[str], operator.add]


def _app():
    def ask(state: S) -> dict:
        answer = interrupt("q")
        return {"log": [f"answer={answer}"]}

    child = StateGraph(S)
    child.add_node("ask", ask)
    child.add_edge(START, "ask")
    parent = StateGraph(S)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "child")
    return parent.compile(checkpointer=InMemorySaver())


def test_update_state_with_child_config_updates_the_child() -> None:
    """An update sent to the interrupted child's namespace lands in the child's state."""
    app = _app()
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    app.invoke({"log": ["in"]}, config)
    child_config = app.get_state(config, subgraphs=True).tasks[0].state.config
    assert child_config["configurable"]["checkpoint_ns"].startswith("child:")
    new_config = app.update_state(child_config, {"log": ["patched"]})
    assert (
        new_config["configurable"]["checkpoint_ns"] == child_config["configurable"]["checkpoint_ns"]
    )
    child_state = app.get_state(new_config)
    assert child_state.values["log"] == ["in", "patched"]
    ns_config = {
        "configurable": {
            k: v for k, v in child_config["configurable"].items() if k != "checkpoint_id"
        }
    }
    history = list(app.get_state_history(ns_config))
    assert history[0].metadata["source"] == "update"
    out = app.invoke(Command(resume="yes"), config)
    assert out["log"][-1] == "answer=yes"
