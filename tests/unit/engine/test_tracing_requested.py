"""Which runs get a tracer: the user's callbacks (in any shape the config allows) do; the
handlers stepgraph adds to stream ``messages`` / ``tools`` / ``events`` do not."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.config import RunnableConfig
from stepgraph.engine import tracing
from stepgraph.graph import START, StateGraph


class _Internal:
    stepgraph_internal = True


class _User:
    pass


class _Manager:
    def __init__(self, handlers: list[Any], inheritable: list[Any]) -> None:
        self.handlers = handlers
        self.inheritable_handlers = inheritable


@pytest.fixture(autouse=True)
def _no_env_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracing, "_tracing_on", lambda: False)


@pytest.mark.parametrize(
    ("callbacks", "wanted"),
    [
        (None, False),
        ([], False),
        ([_Internal()], False),
        ([_Internal(), _User()], True),
        (_User(), True),  # a handler alone
        (_Internal(), False),
        (_Manager([_Internal()], [_Internal()]), False),
        (_Manager([], [_User()]), True),
    ],
)
def test_user_handlers_ask_for_tracing(callbacks: Any, wanted: bool) -> None:
    assert tracing.tracing_requested({"callbacks": callbacks}) is wanted


class S(TypedDict):
    log: Annotated[list[str], operator.add]


def test_a_subgraph_of_a_messages_stream_is_not_traced() -> None:
    pytest.importorskip("langchain_core")
    seen: list[bool] = []

    def probe(state: S, config: RunnableConfig) -> dict:
        seen.append(tracing.tracing_requested(config))
        return {"log": ["p"]}

    child = StateGraph(S).add_node("p", probe).add_edge(START, "p").compile()
    parent = StateGraph(S).add_node("child", child).add_edge(START, "child").compile()
    list(parent.stream({"log": []}, stream_mode="messages"))
    assert seen == [False]
