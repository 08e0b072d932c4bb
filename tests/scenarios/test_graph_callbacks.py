"""``GraphCallbackHandler``: told when a run pauses on interrupts and when it resumes.

Written once for both drivers and every saver. A handler that raises never breaks the run
unless it sets ``raise_error``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.callbacks import GraphCallbackHandler, GraphInterruptEvent, GraphResumeEvent
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Interrupt, interrupt


class S(TypedDict, total=False):
    answer: str


class Record(GraphCallbackHandler):
    def __init__(self) -> None:
        self.events: list[Any] = []

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.events.append(event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.events.append(event)


class AsyncRecord(GraphCallbackHandler):
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        await asyncio.sleep(0)
        self.events.append(event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        self.events.append(event)


class Boom(GraphCallbackHandler):
    def __init__(self, raise_error: bool = False) -> None:
        self.raise_error = raise_error

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        raise ValueError("boom-interrupt")

    def on_resume(self, event: GraphResumeEvent) -> None:
        raise ValueError("boom-resume")


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def _asking(saver: Any, **compile_kwargs: Any) -> Any:
    def ask(state: S) -> S:
        return {"answer": interrupt("why?")}

    builder = StateGraph(S).add_node("ask", ask).add_edge(START, "ask")
    return builder.compile(checkpointer=saver, **compile_kwargs)


@pytest.mark.parametrize("handler_kind", [Record, AsyncRecord])
def test_interrupt_then_resume(driver, saver, handler_kind) -> None:
    handler = handler_kind()
    app = _asking(saver)
    config = {**cfg(), "callbacks": [handler]}
    first = driver.invoke(app, {}, config)
    [paused] = handler.events
    assert isinstance(paused, GraphInterruptEvent)
    assert paused.checkpoint_ns == () and paused.status == "pending"
    assert [i.value for i in paused.interrupts] == ["why?"]
    assert isinstance(paused.interrupts[0], Interrupt)
    assert paused.interrupts == tuple(first["__interrupt__"])
    state = get_state(driver, app, config)
    assert paused.checkpoint_id == state.config["configurable"]["checkpoint_id"]
    assert paused.run_id is not None
    handler.events.clear()
    assert driver.invoke(app, Command(resume="because"), config) == {"answer": "because"}
    [resumed] = handler.events
    assert isinstance(resumed, GraphResumeEvent)
    assert resumed.checkpoint_ns == () and resumed.checkpoint_id == paused.checkpoint_id


def test_a_static_breakpoint_is_an_interrupt_without_values(driver, saver) -> None:
    handler = Record()
    app = (StateGraph(S).add_node("a", lambda s: {"answer": "x"}).add_edge(START, "a")
           .compile(checkpointer=saver, interrupt_before=["a"]))
    config = {**cfg(), "callbacks": [handler]}
    driver.invoke(app, {}, config)
    [event] = handler.events
    assert event.status == "interrupt_before" and event.interrupts == ()
    driver.invoke(app, None, config)
    assert isinstance(handler.events[-1], GraphResumeEvent)


def test_a_raising_handler_does_not_break_the_run(driver, saver) -> None:
    after = Record()
    app = _asking(saver)
    config = {**cfg(), "callbacks": [Boom(), after]}
    assert "__interrupt__" in driver.invoke(app, {}, config)
    assert driver.invoke(app, Command(resume="ok"), config) == {"answer": "ok"}
    assert [type(e) for e in after.events] == [GraphInterruptEvent, GraphResumeEvent]


def test_raise_error_handlers_fail_the_call(driver, saver) -> None:
    app = _asking(saver)
    with pytest.raises(ValueError, match="boom-interrupt"):
        driver.invoke(app, {}, {**cfg(), "callbacks": [Boom(raise_error=True)]})


def test_only_graph_handlers_get_lifecycle_events(driver, saver) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import BaseCallbackHandler, CallbackManager

    class Plain(BaseCallbackHandler):
        def __init__(self) -> None:
            self.custom: list[str] = []

        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            self.custom.append(name)

    plain, handler = Plain(), Record()
    manager = CallbackManager.configure(inheritable_callbacks=[plain])
    manager.add_handler(handler)
    app = _asking(saver)
    driver.invoke(app, {}, {**cfg(), "callbacks": manager})
    assert len(handler.events) == 1 and plain.custom == []


def test_graph_handlers_also_see_the_run_start_and_end(driver, saver) -> None:
    pytest.importorskip("langchain_core")
    seen: list[str] = []

    class Lifecycle(GraphCallbackHandler):
        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            seen.append(f"start:{kwargs.get('name')}")

        def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
            seen.append("end")

        def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
            seen.append(f"error:{type(error).__name__}")

    def fail(state: S) -> S:
        raise KeyError("x")

    app = StateGraph(S).add_node("fail", fail).add_edge(START, "fail").compile(checkpointer=saver)
    with pytest.raises(KeyError):
        driver.invoke(app, {}, {**cfg(), "callbacks": [Lifecycle()]})
    assert seen == ["start:LangGraph", "start:fail", "error:KeyError", "error:KeyError"]


def test_a_subgraph_interrupt_is_reported_once_by_the_root(driver, saver) -> None:
    handler = Record()
    child = _asking(None)
    parent = StateGraph(S).add_node("child", child).add_edge(START, "child").compile(checkpointer=saver)
    config = {**cfg(), "callbacks": [handler]}
    driver.invoke(parent, {}, config)
    [event] = handler.events
    assert event.checkpoint_ns == () and [i.value for i in event.interrupts] == ["why?"]
