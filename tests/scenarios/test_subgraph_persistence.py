"""Where subgraphs keep their checkpoints, and how they pause and continue with their parent;
on every driver x saver.

Expected outputs were taken from LangGraph 1.2.22 run as an oracle.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.types import Send


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def state(driver, app, config):
    if driver.is_async:
        return asyncio.run(app.aget_state(config))
    return app.get_state(config)


def update(driver, app, config, values):
    if driver.is_async:
        return asyncio.run(app.aupdate_state(config, values))
    return app.update_state(config, values)


class S(TypedDict):
    items: Annotated[list[str], operator.add]


class R(TypedDict):
    result: str


def _echo(prefix):
    return (
        StateGraph(S)
        .add_node("echo", lambda s: {"items": [f"{prefix}:{s['items'][-1]}"]})
        .add_edge(START, "echo")
        .compile(checkpointer=True)
    )


def test_two_stateful_graphs_called_in_one_node_keep_separate_histories(driver, saver):
    fruit, veggie = _echo("fruit"), _echo("veggie")
    seen: list[Any] = []

    def call_both(s):
        n = len(seen) // 2 + 1
        seen.append(fruit.invoke({"items": [f"cherry{n}"]})["items"])
        seen.append(veggie.invoke({"items": [f"leek{n}"]})["items"])
        return {"result": "ok"}

    async def acall_both(s):
        n = len(seen) // 2 + 1
        seen.append((await fruit.ainvoke({"items": [f"cherry{n}"]}))["items"])
        seen.append((await veggie.ainvoke({"items": [f"leek{n}"]}))["items"])
        return {"result": "ok"}

    node = acall_both if driver.is_async else call_both
    app = StateGraph(R).add_node("call_both", node).add_edge(START, "call_both").compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"result": ""}, c)
    driver.invoke(app, {"result": ""}, c)
    assert seen[2:] == [
        ["cherry1", "fruit:cherry1", "cherry2", "fruit:cherry2"],
        ["leek1", "veggie:leek1", "leek2", "veggie:leek2"],
    ]


def test_graph_called_with_its_own_thread_is_a_root_run(driver, saver):
    class C(TypedDict):
        count: int

    child = (
        StateGraph(C)
        .add_node("n", lambda s: {"count": (s.get("count") or 0) + 1})
        .add_edge(START, "n")
        .compile(checkpointer=saver)
    )
    child_config = cfg()

    async def acall(s):
        await child.ainvoke({}, child_config)
        return {"result": "ok"}

    def call(s):
        child.invoke({}, child_config)
        return {"result": "ok"}

    node = acall if driver.is_async else call
    app = StateGraph(R).add_node("p", node).add_edge(START, "p").compile(checkpointer=saver)
    c = cfg()
    driver.invoke(app, {"result": ""}, c)
    first = state(driver, child, child_config)
    assert first.values == {"count": 1}
    assert first.config["configurable"]["checkpoint_ns"] == ""
    driver.invoke(app, {"result": ""}, c)
    assert state(driver, child, child_config).values == {"count": 2}


def test_subgraph_breakpoint_pauses_the_parent_task(driver, saver):
    class Joke(TypedDict):
        subject: str

    class Top(TypedDict):
        subjects: list[str]
        items: Annotated[list[str], operator.add]

    sub = StateGraph(Joke, output_schema=Top)
    sub.add_node("edit", lambda s: {"subject": s["subject"] + "!"})
    sub.add_node("tell", lambda s: {"items": [f"joke:{s['subject']}"]})
    sub.add_edge(START, "edit")
    sub.add_edge("edit", "tell")
    app = (
        StateGraph(Top)
        .add_node("joke", sub.compile(interrupt_before=["tell"]))
        .add_conditional_edges(START, lambda s: [Send("joke", {"subject": x}) for x in s["subjects"]])
        .compile(checkpointer=saver)
    )
    c = cfg()
    assert driver.invoke(app, {"subjects": ["cat", "dog"]}, c) == {"subjects": ["cat", "dog"], "items": []}
    paused = state(driver, app, c)
    assert paused.next == ("joke", "joke")
    assert [t.interrupts for t in paused.tasks] == [(), ()]
    update(driver, app, paused.tasks[1].state, {"subject": "turtle!"})
    chunks = driver.stream(app, None, c)
    assert sorted(ch["joke"]["items"][0] for ch in chunks) == ["joke:cat!", "joke:turtle!"]
    assert state(driver, app, c).values["items"] == ["joke:cat!", "joke:turtle!"]
