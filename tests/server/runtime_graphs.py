"""Graphs of the run-machinery tests (delays, multitask locks, byte budgets).

``hold`` nodes block on a ``threading.Event`` of their ``key`` (``gate(key)``) and record
``("enter", key)`` / ``("exit", key)`` in ``EVENTS``, so tests can assert what happened
while a sync node was blocked (the server runs in the test's process).
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph

EVENTS: list[tuple[str, str]] = []
"""``(kind, key)`` in the order they happened."""
_GATES: dict[str, threading.Event] = {}
_LOCK = threading.Lock()


def record(kind: str, key: str) -> None:
    with _LOCK:
        EVENTS.append((kind, key))


def seen(kind: str, key: str) -> bool:
    with _LOCK:
        return (kind, key) in EVENTS


def position(kind: str, key: str) -> int:
    with _LOCK:
        return EVENTS.index((kind, key))


def gate(key: str) -> threading.Event:
    """The event a ``hold`` node of ``key`` waits for."""
    with _LOCK:
        return _GATES.setdefault(key, threading.Event())


class GateState(TypedDict, total=False):
    key: str
    steps: Annotated[list[str], operator.add]


def _hold(state: GateState) -> dict[str, Any]:
    key = state["key"]
    record("enter", key)
    gate(key).wait(120)
    record("exit", key)
    return {"steps": [f"hold:{key}"]}


def _side(state: GateState) -> dict[str, Any]:
    return {"steps": ["side"]}


gate_single = StateGraph(GateState).add_node("hold", _hold).add_edge(START, "hold").add_edge("hold", END)
"""One blocking sync node (a step with one task)."""

gate_fanout = (
    StateGraph(GateState)
    .add_node("hold", _hold)
    .add_node("side", _side)
    .add_edge(START, "hold")
    .add_edge(START, "side")
    .add_edge("hold", END)
    .add_edge("side", END)
)
"""A blocking sync node beside a quick one (a step with two tasks)."""


class PumpState(TypedDict, total=False):
    size: int
    count: int
    n: int
    blob: str


def _pump(state: PumpState) -> dict[str, Any]:
    n = state.get("n", 0) + 1
    return {"n": n, "blob": f"{n}:" + "x" * int(state.get("size", 1000))}


def _again(state: PumpState) -> str:
    return "pump" if state.get("n", 0) < int(state.get("count", 1)) else END


pump = (
    StateGraph(PumpState)
    .add_node("pump", _pump)
    .add_edge(START, "pump")
    .add_conditional_edges("pump", _again, ["pump", END])
)
"""``count`` steps, each writing a ``size``-character ``blob`` (large ``values`` events)."""

GRAPHS = {"gate_single": gate_single, "gate_fanout": gate_fanout, "pump": pump}
