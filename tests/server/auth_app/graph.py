"""A graph that reports who ran it (config, ``get_config()`` and ``runtime.server_info``)."""

from __future__ import annotations

import time
from typing import Any, TypedDict

from stepgraph.config import get_config
from stepgraph.graph import END, START, StateGraph
from stepgraph.runtime import Runtime
from stepgraph.types import interrupt


class State(TypedDict, total=False):
    value: str
    who: dict[str, Any]
    answer: str


def whoami(state: State, runtime: Runtime) -> State:
    configurable = get_config()["configurable"]
    user = configurable.get("langgraph_auth_user")
    info = runtime.server_info
    return {"who": {
        "user_id": configurable.get("langgraph_auth_user_id"),
        "identity": user["identity"] if user is not None else None,
        "attr_identity": getattr(user, "identity", None),
        "display_name": getattr(user, "display_name", None),
        "team": user.get("team") if user is not None else None,
        "permissions": configurable.get("langgraph_auth_permissions"),
        "configurable_user_id": configurable.get("user_id"),
        "server_user": info.user.identity if info is not None and info.user is not None else None,
        "server_graph": info.graph_id if info is not None else None,
    }}


def ask(state: State) -> State:
    return {"answer": interrupt("your name?")}


builder = StateGraph(State)
builder.add_node("whoami", whoami)
builder.add_edge(START, "whoami")
builder.add_edge("whoami", END)
graph = builder.compile()

hitl_builder = StateGraph(State)
hitl_builder.add_node("ask", ask)
hitl_builder.add_edge(START, "ask")
hitl_builder.add_edge("ask", END)
hitl = hitl_builder.compile()


def nap(state: State) -> State:
    time.sleep(float(state.get("value") or 1))
    return {"answer": "rested"}


slow_builder = StateGraph(State)
slow_builder.add_node("nap", nap)
slow_builder.add_edge(START, "nap")
slow_builder.add_edge("nap", END)
slow = slow_builder.compile()
