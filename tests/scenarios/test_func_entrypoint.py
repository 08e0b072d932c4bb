"""Functional API, entrypoints: input, `previous`, `entrypoint.final`, stream modes, and the
errors raised for unsupported entrypoint functions and for tasks called outside a graph.

Expected outputs were taken from LangGraph 1.2.22 run as an oracle (semantics §2.22, items
132-135).
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid

import pytest

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.func import entrypoint, task


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    """A fresh checkpointer of each kind."""
    if request.param == "memory":
        yield InMemorySaver()
    else:
        from stepgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "x.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


def cfg():
    """A config on a new, unique thread."""
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


@task
def add1(x: int) -> int:
    return x + 1


def test_entrypoint_single_input(driver):
    """An entrypoint takes its single input positionally and returns the function's result."""

    @entrypoint()
    def double(x: int) -> int:
        return x * 2

    assert driver.invoke(double, 3) == 6
    assert double.name == "LangGraph"


def test_entrypoint_dict_input(driver):
    """A dict input is passed through unchanged as the single argument."""

    @entrypoint()
    def keys(d: dict) -> list:
        return sorted(d)

    assert driver.invoke(keys, {"b": 1, "a": 2}) == ["a", "b"]


def test_async_entrypoint(driver):
    """An async entrypoint function runs under invoke and ainvoke alike."""

    @entrypoint()
    async def triple(x: int) -> int:
        await asyncio.sleep(0)
        return x * 3

    if driver.is_async:
        assert driver.invoke(triple, 2) == 6
    else:
        assert asyncio.run(triple.ainvoke(2)) == 6


def test_previous_across_runs(driver, saver):
    """`previous` is None on a thread's first run, then the last returned value."""

    @entrypoint(checkpointer=saver)
    def acc(x: int, *, previous=None) -> int:
        return (previous or 0) + x

    config = cfg()
    assert [driver.invoke(acc, v, config) for v in (1, 2, 3)] == [1, 3, 6]
    assert driver.invoke(acc, 5, cfg()) == 5


def test_previous_is_none_without_checkpointer(driver):
    """Without a checkpointer `previous` is always None."""

    @entrypoint()
    def show(x: int, *, previous=None):
        return [x, previous]

    assert driver.invoke(show, 1) == [1, None]
    assert driver.invoke(show, 2) == [2, None]


def test_entrypoint_final_returns_value_saves_save(driver, saver):
    """entrypoint.final(value=..., save=...) returns value; the next run sees save as previous."""

    @entrypoint(checkpointer=saver)
    def fin(x: int, *, previous=None):
        return entrypoint.final(value=f"prev={previous}", save=x * 10)

    config = cfg()
    assert driver.invoke(fin, 1, config) == "prev=None"
    assert driver.invoke(fin, 2, config) == "prev=10"
    state = asyncio.run(fin.aget_state(config)) if driver.is_async else fin.get_state(config)
    assert state.values == "prev=10"


def test_stream_updates_tasks_then_entrypoint(driver):
    """stream_mode='updates' (the default) yields {task: result} per call, then {entrypoint: out}."""

    @entrypoint()
    def chain(x: int) -> list:
        a = add1(x).result()
        b = add1(a).result()
        return [a, b]

    assert driver.stream(chain, 1) == [{"add1": 2}, {"add1": 3}, {"chain": [2, 3]}]
    assert driver.stream(chain, 1, stream_mode="updates") == [
        {"add1": 2},
        {"add1": 3},
        {"chain": [2, 3]},
    ]


def test_stream_values_yields_result(driver):
    """stream_mode='values' yields only the entrypoint's return value."""

    @entrypoint()
    def chain(x: int) -> list:
        return [add1(x).result(), x]

    assert driver.stream(chain, 1, stream_mode="values") == [[2, 1]]


def test_stream_updates_with_final(driver, saver):
    """With entrypoint.final the update and the value are the returned value, not the saved one."""

    @entrypoint(checkpointer=saver)
    def fin(x: int, *, previous=None):
        return entrypoint.final(value=x + 1, save="saved")

    assert driver.stream(fin, 1, cfg()) == [{"fin": 2}]
    assert driver.stream(fin, 1, cfg(), stream_mode="values") == [2]


def test_generator_entrypoint_rejected():
    """A generator function raises NotImplementedError at decoration time."""
    with pytest.raises(NotImplementedError, match="Generators are not supported"):

        @entrypoint()
        def gen(x):
            yield x


def test_zero_parameter_entrypoint_rejected():
    """An entrypoint function without parameters raises ValueError."""
    with pytest.raises(ValueError, match="Entrypoint function must have at least one parameter"):

        @entrypoint()
        def zero():
            return 1


def test_task_called_outside_graph_raises():
    """Calling a task outside any running graph raises RuntimeError."""
    with pytest.raises(RuntimeError, match="outside of a runnable context"):
        add1(1)
