"""Outside a stepgraph task, ``get_config()`` / ``get_runtime()`` / ``get_store()`` read the
config langchain-core's context holds (as LangGraph's do): code that sets a LangGraph-style
``{"configurable": {"__pregel_runtime": ...}}`` context reaches them."""

from __future__ import annotations

import pytest

from stepgraph.config import get_config, get_store, get_stream_writer
from stepgraph.runtime import Runtime, get_runtime
from stepgraph.store.memory import InMemoryStore


def test_ambient_langchain_context() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.runnables.config import var_child_runnable_config

    store = InMemoryStore()
    runtime = Runtime(store=store)
    token = var_child_runnable_config.set({"configurable": {"__pregel_runtime": runtime}})
    try:
        assert get_runtime() is runtime and get_store() is store
        assert get_config()["configurable"]["__pregel_runtime"] is runtime
        assert get_stream_writer() is runtime.stream_writer
    finally:
        var_child_runnable_config.reset(token)
    with pytest.raises(RuntimeError):
        get_runtime()
