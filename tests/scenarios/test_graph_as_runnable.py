"""A compiled graph composes with langchain-core runnables (``graph | other``), and ``astream_events`` takes the caller's ``run_id`` and
``stream_mode`` for the graph's own events.

Each scenario runs on both drivers. Expected outputs were taken from LangGraph 1.2.22.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import StateGraph

pytest.importorskip("langchain_core")
from langchain_core.runnables import RunnablePassthrough  # noqa: E402


class S(TypedDict):
    k: str


def _app():
    inner = StateGraph(S)
    inner.add_node("up", lambda s: {"k": s["k"] + " up"})
    inner.set_entry_point("up")
    inner.set_finish_point("up")
    g = StateGraph(S)
    g.add_node("inner", inner.compile())
    g.add_node("side", lambda s: {"k": s["k"] + " side"})
    g.set_entry_point("inner")
    g.add_edge("inner", "side")
    g.set_finish_point("side")
    return g.compile()


def test_graph_piped_into_a_runnable(driver):
    chain = _app() | RunnablePassthrough()
    if driver.is_async:
        out = asyncio.run(chain.ainvoke({"k": "v"}))

        async def collect():
            return [c async for c in chain.astream({"k": "v"})]

        chunks = asyncio.run(collect())
    else:
        out = chain.invoke({"k": "v"})
        chunks = list(chain.stream({"k": "v"}))
    assert out == {"k": "v up side"}
    assert chunks == [{"inner": {"k": "v up"}}, {"side": {"k": "v up side"}}]


def test_stream_events_take_run_id_and_stream_mode():
    app = _app()

    async def collect(**kw):
        return [e async for e in app.astream_events({"k": "v"}, version="v2",
                                                     config={"run_id": UUID(int=0)}, **kw)]

    root = str(UUID(int=0))
    events = asyncio.run(collect(stream_mode="values"))
    mine = [(e["event"], e["data"]) for e in events if e["run_id"] == root]
    assert mine == [
        ("on_chain_start", {"input": {"k": "v"}}),
        ("on_chain_stream", {"chunk": {"k": "v"}}),
        ("on_chain_stream", {"chunk": {"k": "v up"}}),
        ("on_chain_stream", {"chunk": {"k": "v up side"}}),
        ("on_chain_end", {"output": {"k": "v up side"}}),
    ]
    events = asyncio.run(collect())
    chunks = [e["data"]["chunk"] for e in events
              if e["run_id"] == root and e["event"] == "on_chain_stream"]
    assert chunks == [{"inner": {"k": "v up"}}, {"side": {"k": "v up side"}}]
