"""``update_state`` runs ``as_node``'s writers: ``None`` as ``__start__`` re-runs a step, and
an async router is awaited by ``aupdate_state``."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from scenario_savers import SAVER_KINDS, cfg, open_saver
from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


class S(TypedDict):
    items: Annotated[list, operator.add]


def test_update_with_none_after_start_reruns_the_first_node(driver, saver):
    """On the checkpoint where ``__start__`` ran last, ``update_state(config, None)`` writes
    no state but keeps the start edges, so ``invoke(None)`` from it runs ``one`` again."""
    g = StateGraph(S)
    g.add_node("one", lambda s: {"items": ["one"]})
    g.add_node("two", lambda s: {"items": ["two"]})
    g.add_edge(START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", END)
    app = g.compile(checkpointer=saver)
    config = cfg()
    driver.invoke(app, {"items": []}, config)
    target = next(s for s in app.get_state_history(config) if s.metadata["step"] == 0)
    assert target.next == ("one",)
    if driver.is_async:
        updated = asyncio.run(app.aupdate_state(target.config, None))
    else:
        updated = app.update_state(target.config, None)
    assert app.get_state(updated).next == ("one",)
    assert driver.invoke(app, None, updated) == {"items": ["one", "two"]}


def test_aupdate_state_awaits_an_async_router(saver):
    """``aupdate_state(..., as_node=n)`` where ``n`` has an async conditional edge awaits the
    router on the updated state; the next step is where it routes."""
    seen = []

    async def route(state: S) -> str:
        seen.append(list(state["items"]))
        return "b"

    g = StateGraph(S)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route, ["b"])
    app = g.compile(checkpointer=saver, interrupt_after=["a"])
    config = cfg()

    async def run():
        await app.ainvoke({"items": []}, config)
        await app.aupdate_state(config, {"items": ["x"]}, as_node="a")
        state = await app.aget_state(config)
        return state.next, await app.ainvoke(None, config)

    assert asyncio.run(run()) == (("b",), {"items": ["a", "x", "b"]})
    assert seen == [["a"], ["a", "x"]]
