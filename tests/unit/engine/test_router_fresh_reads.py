"""A router sees the state as at the end of its node's step (LangGraph's fresh read): its
node's writes applied, and an ephemeral value written the step before already cleared."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.graph import END, START, StateGraph


class S(TypedDict, total=False):
    jump: Annotated[str | None, EphemeralValue]
    log: list[str]


def test_an_ephemeral_jump_from_the_previous_step_does_not_route_again() -> None:
    seen: list[object] = []

    def first(state: S) -> S:
        return {"jump": "again", "log": ["first"]}

    def second(state: S) -> S:
        return {"log": [*state["log"], "second"]}

    def route(state: S) -> str:
        seen.append(state.get("jump"))
        return "second" if state.get("jump") == "again" and len(seen) == 1 else END

    builder = StateGraph(S)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_conditional_edges("first", route, ["second", END])
    builder.add_conditional_edges("second", route, ["second", END])
    out = builder.compile().invoke({})
    assert out["log"] == ["first", "second"]
    assert seen == ["again", None]  # second's router: the jump written by first is gone
