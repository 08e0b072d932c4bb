"""Child process of the SIGKILL crash test: runs (or resumes) one thread of a looping graph.

Usage: ``python _crash_worker.py DB_PATH THREAD_ID MODE START [SEED]``

* ``MODE`` is ``sync`` (``SqliteSaver`` + ``invoke``) or ``async`` (``AsyncSqliteSaver`` +
  ``asyncio.run(ainvoke)``).
* ``START`` is ``fresh`` (invoke with the initial input) or ``resume`` (``invoke(None)``).

The graph: ``START -(route)-> work x K -> step -(route)-> work x K -> ... -> END``. ``route``
fans out ``K`` ``Send("work", {"round": r, "k": k})`` while ``round < R``; every ``work``
task appends ``[r, k]`` to ``items`` (an ``operator.add`` reducer) and sleeps a little so
that kills land mid-step; ``step`` increments ``round``. The exact final state is
``round == R`` and ``items`` == every ``[r, k]`` (``r < R``, ``k < K``) exactly once.

The child prints ``READY`` once the graph is built and the engine's run-time modules are
loaded (the parent starts its kill timer then)
and ``DONE <json result>`` when the run returned normally.

The test imports this file too (``build_graph``, ``expected_items``, the constants), so
the parent reads the database with exactly the same graph.
"""

from __future__ import annotations

import asyncio
import json
import operator
import random
import sys
import time
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send

R = 30
"""Rounds per thread."""
K = 4
"""``Send`` fan-out per round."""
MAX_WORK_SLEEP = 0.002
"""Upper bound of a ``work`` task's random sleep (seconds)."""


class State(TypedDict):
    round: int
    items: Annotated[list, operator.add]


class WorkArg(TypedDict):
    round: int
    k: int


def route(state: State) -> Any:
    r = state["round"]
    if r >= R:
        return END
    return [Send("work", {"round": r, "k": k}) for k in range(K)]


def step(state: State) -> dict[str, Any]:
    return {"round": state["round"] + 1}


def work(arg: WorkArg) -> dict[str, Any]:
    time.sleep(random.random() * MAX_WORK_SLEEP)
    return {"items": [[arg["round"], arg["k"]]]}


async def awork(arg: WorkArg) -> dict[str, Any]:
    await asyncio.sleep(random.random() * MAX_WORK_SLEEP)
    return {"items": [[arg["round"], arg["k"]]]}


def build_graph(*, use_async: bool = False) -> StateGraph:
    """The (uncompiled) graph; ``use_async`` makes ``work`` a coroutine node."""
    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_node("work", awork if use_async else work)
    builder.add_conditional_edges(START, route, ["work", END])
    builder.add_conditional_edges("step", route, ["work", END])
    builder.add_edge("work", "step")
    return builder


def initial_input() -> dict[str, Any]:
    return {"round": 0, "items": []}


def expected_items() -> list[tuple[int, int]]:
    return [(r, k) for r in range(R) for k in range(K)]


def config_for(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 10 * R + 10}


def _announce(text: str) -> None:
    if text == "READY":
        # A graph's first run loads the engine's run-time modules (pregel/_run.py, the
        # drivers); load them first, so the kill window covers the run, not imports.
        import stepgraph.engine.driver_async  # noqa: F401
        import stepgraph.pregel._run  # noqa: F401
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run_sync(db_path: str, thread_id: str, start: str) -> Any:
    from stepgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(db_path) as saver:
        graph = build_graph().compile(checkpointer=saver)
        _announce("READY")
        inp = initial_input() if start == "fresh" else None
        return graph.invoke(inp, config_for(thread_id))


async def run_async(db_path: str, thread_id: str, start: str) -> Any:
    from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(db_path) as saver:
        graph = build_graph(use_async=True).compile(checkpointer=saver)
        _announce("READY")
        inp = initial_input() if start == "fresh" else None
        return await graph.ainvoke(inp, config_for(thread_id))


def main(argv: list[str]) -> int:
    db_path, thread_id, mode, start = argv[:4]
    if len(argv) > 4:
        random.seed(argv[4])
    if mode == "sync":
        result = run_sync(db_path, thread_id, start)
    elif mode == "async":
        result = asyncio.run(run_async(db_path, thread_id, start))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    _announce("DONE " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
