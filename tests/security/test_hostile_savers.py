"""The hostile-blob corpus planted in every saver's storage, read back every way.

For each saver (memory, SQLite sync and async, PostgreSQL sync and async) a graph writes a
thread; the attacker then overwrites the stored bytes of its ``messages`` channel (raw SQL
``UPDATE`` on the blob rows, or the memory saver's dict) with a corpus blob, and the test
reads the thread with ``get_tuple``, ``list`` and ``graph.get_state`` (their async twins for
the async savers). Every read must raise ``SerializationError`` with the case's code; no
marker file may appear and the audit hook must see no process, exec, import or write.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from hostile_blobs import Hostile, corpus

from stepgraph.checkpoint.serde import SerializationError
from stepgraph.graph import START, StateGraph

CASES = corpus("/nonexistent/marker-placeholder")
_NAMES = [c.name for c in CASES]


class State(TypedDict):
    messages: Annotated[list, operator.add]
    note: str


def _node(state: State) -> dict[str, Any]:
    return {"messages": [len(state["messages"])], "note": "done"}


def build_graph(saver: Any) -> Any:
    return StateGraph(State).add_node("n", _node).add_edge(START, "n").compile(checkpointer=saver)


async def seed(storage: Any) -> tuple[Any, dict[str, Any]]:
    """A graph on the saver and the config of a thread it ran (short thread id)."""
    graph = build_graph(storage.saver)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:10]}"}}
    if storage.is_async:
        await graph.ainvoke({"messages": [0], "note": "a"}, config)
    else:
        graph.invoke({"messages": [0], "note": "a"}, config)
    return graph, config


async def read_all_ways(storage: Any, graph: Any, config: dict[str, Any]) -> list[str]:
    """The error code of each read path (``"LOADED"`` if one returned)."""
    saver = storage.saver
    codes: list[str] = []
    if storage.is_async:
        reads = [
            lambda: saver.aget_tuple(config),
            lambda: _alist(saver, config),
            lambda: graph.aget_state(config),
        ]
        for read in reads:
            try:
                await read()
                codes.append("LOADED")
            except SerializationError as exc:
                codes.append(exc.code)
    else:
        for read in (
            lambda: saver.get_tuple(config),
            lambda: list(saver.list(config)),
            lambda: graph.get_state(config),
        ):
            try:
                read()
                codes.append("LOADED")
            except SerializationError as exc:
                codes.append(exc.code)
    return codes


async def _alist(saver: Any, config: dict[str, Any]) -> list[Any]:
    return [t async for t in saver.alist(config)]


@pytest.mark.parametrize("case", CASES, ids=_NAMES)
async def test_planted_channel_blob_is_refused(
    storage: Any, hostile: list[Hostile], watch: Any, case: Hostile
) -> None:
    """Every corpus blob, planted as a channel value, is refused by every read path."""
    case = next(c for c in hostile if c.name == case.name)  # the one naming the real marker
    graph, config = await seed(storage)
    storage.plant_channel(config["configurable"]["thread_id"], case.typed)
    with watch.reading():
        codes = await read_all_ways(storage, graph, config)
    assert set(codes) <= case.codes, (case.name, codes)


POC_NAMES = ["poc-msgpack-id", "poc-json-id", "walk-filehandler", "nested-objects-segfault",
             "flood-array-keys", "pickle-blob"]


@pytest.mark.parametrize("where", ["checkpoint", "write"])
@pytest.mark.parametrize("name", POC_NAMES)
async def test_planted_checkpoint_row_and_write_are_refused(
    storage: Any, hostile: list[Hostile], watch: Any, name: str, where: str
) -> None:
    """The proofs of concept planted as the checkpoint row itself, or as a pending write."""
    case = next(c for c in hostile if c.name == name)
    graph, config = await seed(storage)
    thread_id = config["configurable"]["thread_id"]
    if where == "write":
        latest = await storage.saver.aget_tuple(config) if storage.is_async else \
            storage.saver.get_tuple(config)
        if storage.is_async:
            await storage.saver.aput_writes(latest.config, [("note", "x")], "task-1")
        else:
            storage.saver.put_writes(latest.config, [("note", "x")], "task-1")
        storage.plant_write(thread_id, case.typed)
    else:
        storage.plant_checkpoint(thread_id, case.typed)
    with watch.reading():
        codes = await read_all_ways(storage, graph, config)
    assert set(codes) <= case.codes, (name, where, codes)


async def test_poc_is_refused_and_the_thread_stays_readable_elsewhere(
    storage: Any, hostile: list[Hostile], watch: Any
) -> None:
    """Refusing one thread's planted blob leaves the saver usable for the others."""
    case = next(c for c in hostile if c.name == "poc-msgpack-id")
    graph, bad = await seed(storage)
    _, good = await seed(storage)
    storage.plant_channel(bad["configurable"]["thread_id"], case.typed)
    with watch.reading():
        assert set(await read_all_ways(storage, graph, bad)) == {"SG401"}
    state = await graph.aget_state(good) if storage.is_async else graph.get_state(good)
    assert state.values == {"messages": [0, 1], "note": "done"}
