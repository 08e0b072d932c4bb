"""Graphs of the cluster tests: counted steps (async or sync) with an optional ``Send`` fan-out.

Input ``{"n": 0, "steps": K, "sleep": s, "fan": f, "sync": bool}``: each step sleeps ``s``
seconds (in ``fan`` parallel branches when ``fan`` > 0) and adds one to ``n``, ``steps`` times.
``"mark": true`` makes each step first emit a custom event ``{"step": n}`` (so a kill during
its sleep lands between the step's events and its commit). ``"poison": true`` SIGKILLs the worker process executing the step. ``"keylog": path`` appends
each execution's idempotency key (``runtime.execution_info.idempotency_key``) to ``path``,
as an external side effect would use it.
"""

from __future__ import annotations

import asyncio
import operator
import os
import signal
import time
from typing import Annotated, Any, TypedDict

from stepgraph.config import get_stream_writer
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import Runtime
from stepgraph.types import Send


class State(TypedDict, total=False):
    n: int
    steps: int
    sleep: float
    fan: int
    sync: bool
    poison: bool
    mark: bool
    keylog: str
    hits: Annotated[list, operator.add]


async def step(state: State, runtime: Runtime) -> dict[str, Any]:
    if state.get("keylog"):
        with open(state["keylog"], "a") as log:
            log.write(runtime.execution_info.idempotency_key + "\n")
    if state.get("mark"):
        get_stream_writer()({"step": state.get("n", 0)})
    if state.get("poison"):  # a run that kills every worker that executes it
        os.kill(os.getpid(), signal.SIGKILL)
    if state.get("sync"):
        time.sleep(state.get("sleep", 0.0))
    else:
        await asyncio.sleep(state.get("sleep", 0.0))
    return {"n": state.get("n", 0) + 1}


async def branch(arg: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(arg["sleep"])
    return {"hits": [f"{arg['n']}.{arg['i']}"]}


def route(state: State) -> Any:
    if state.get("n", 0) >= state.get("steps", 1):
        return END
    fan = state.get("fan", 0)
    if fan:
        return [Send("branch", {"n": state.get("n", 0), "i": i, "sleep": state.get("sleep", 0.0)})
                for i in range(fan)]
    return "step"


builder = StateGraph(State)
builder.add_node("step", step)
builder.add_node("branch", branch)
builder.add_edge(START, "step")
builder.add_conditional_edges("step", route, ["step", "branch", END])
builder.add_edge("branch", "step")
graph = builder.compile()
