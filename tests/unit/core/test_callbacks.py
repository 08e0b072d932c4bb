"""``stepgraph.callbacks`` managers: which handlers they keep and how they dispatch."""

from __future__ import annotations

import asyncio
from uuid import UUID

import pytest

from stepgraph.callbacks import (
    AsyncGraphCallbackManager,
    GraphCallbackHandler,
    GraphCallbackManager,
    GraphResumeEvent,
    get_async_graph_callback_manager_for_config,
    get_sync_graph_callback_manager_for_config,
    graph_handlers,
)


class H(GraphCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.seen.append(event.checkpoint_id)


EVENT = GraphResumeEvent(run_id=None, status="pending", checkpoint_id="c1", checkpoint_ns=())


def test_only_graph_handlers_are_kept() -> None:
    h = H()
    assert graph_handlers(None) == [] and graph_handlers(h) == [h]
    assert graph_handlers([object(), h, h]) == [h]
    with pytest.raises(TypeError):
        graph_handlers("not callbacks")
    manager = get_sync_graph_callback_manager_for_config({"callbacks": [h, object()]},
                                                         run_id=UUID(int=1))
    assert manager.handlers == [h] and manager.run_id == UUID(int=1)
    assert manager.copy().run_id == UUID(int=1)
    plain = object()
    manager.add_handler(plain)
    assert plain in manager.handlers
    manager.on_resume(EVENT)  # the plain handler gets nothing and breaks nothing
    manager.remove_handler(plain)
    assert h.seen == ["c1"]


def test_async_manager_awaits_async_methods() -> None:
    class A(GraphCallbackHandler):
        def __init__(self) -> None:
            self.seen: list[str] = []

        async def on_resume(self, event: GraphResumeEvent) -> None:
            self.seen.append(event.status)

    a, h = A(), H()
    manager = get_async_graph_callback_manager_for_config({"callbacks": [a, h]})
    assert isinstance(manager, AsyncGraphCallbackManager)
    asyncio.run(manager.on_resume(EVENT))
    assert a.seen == ["pending"] and h.seen == ["c1"]
    GraphCallbackManager.configure([a]).on_resume(EVENT)  # sync manager runs the coroutine
    assert a.seen == ["pending", "pending"]


def test_langchain_managers_are_searched() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import CallbackManager

    h = H()
    manager = CallbackManager.configure(inheritable_callbacks=[h])
    assert graph_handlers(manager) == [h]
