"""RetryPolicy, per-node timeouts, parallelism and cancellation of siblings."""

import asyncio
import time

import pytest
from typing_extensions import TypedDict

from stepgraph.errors import NodeTimeoutError
from stepgraph.graph import START, StateGraph
from stepgraph.types import RetryPolicy

DEFAULT_RETRY_BUG = (
    "stepgraph bug: RetryPolicy() default retry_on is a dataclasses.Field (NamedTuple with "
    "field(default=None)), so any failure under a default policy raises "
    "TypeError(\"'Field' object is not callable\")"
)
FAST = {"initial_interval": 0, "jitter": False}


class S(TypedDict):
    a: int
    b: int


def _flaky(exc: type[BaseException], failures: int):
    """A node failing `failures` times with `exc`, then writing the call count to `a`."""
    calls = []

    def node(state: S) -> dict:
        calls.append(1)
        if len(calls) <= failures:
            raise exc("flaky")
        return {"a": len(calls)}

    return node, calls


def _one(node, **kwargs):
    g = StateGraph(S)
    g.add_node("node", node, **kwargs)
    g.add_edge(START, "node")
    return g.compile()


def test_default_policy_retries_connection_error(driver):
    """The default predicate retries ConnectionError: 2 failures + success = 3 calls."""
    node, calls = _flaky(ConnectionError, 2)
    assert driver.invoke(_one(node, retry_policy=RetryPolicy(**FAST)), {"a": 0}) == {"a": 3}
    assert len(calls) == 3


def test_default_policy_does_not_retry_value_error(driver):
    """The default predicate does not retry ValueError: 1 call, the error propagates."""
    node, calls = _flaky(ValueError, 2)
    with pytest.raises(ValueError, match="flaky"):
        driver.invoke(_one(node, retry_policy=RetryPolicy(**FAST)), {"a": 0})
    assert len(calls) == 1


def test_default_policy_gives_up_after_max_attempts(driver):
    """A node failing more often than max_attempts raises after exactly max_attempts calls."""
    node, calls = _flaky(ConnectionError, 10)
    with pytest.raises(ConnectionError):
        driver.invoke(_one(node, retry_policy=RetryPolicy(max_attempts=4, **FAST)), {"a": 0})
    assert len(calls) == 4


def test_default_retry_policy_fields():
    """RetryPolicy's numeric defaults match LangGraph's."""
    p = RetryPolicy()
    assert (p.initial_interval, p.backoff_factor, p.max_interval, p.max_attempts, p.jitter) == (
        0.5,
        2.0,
        128.0,
        3,
        True,
    )


def test_default_retry_on_is_callable():
    """RetryPolicy().retry_on is the default predicate (a callable)."""
    assert callable(RetryPolicy().retry_on)


def test_retry_on_class_retries_to_success(driver):
    """retry_on=ConnectionError retries it: 3 calls, the third succeeds."""
    node, calls = _flaky(ConnectionError, 2)
    policy = RetryPolicy(retry_on=ConnectionError, **FAST)
    assert driver.invoke(_one(node, retry_policy=policy), {"a": 0}) == {"a": 3}
    assert len(calls) == 3


def test_retry_on_class_skips_other_errors(driver):
    """retry_on=ConnectionError does not retry a ValueError: 1 call."""
    node, calls = _flaky(ValueError, 2)
    policy = RetryPolicy(retry_on=ConnectionError, **FAST)
    with pytest.raises(ValueError, match="flaky"):
        driver.invoke(_one(node, retry_policy=policy), {"a": 0})
    assert len(calls) == 1


def test_retry_on_predicate_and_tuple(driver):
    """retry_on may be a predicate or a tuple of classes."""
    node, calls = _flaky(ValueError, 2)
    policy = RetryPolicy(retry_on=lambda e: isinstance(e, ValueError), **FAST)
    assert driver.invoke(_one(node, retry_policy=policy), {"a": 0}) == {"a": 3}
    node, calls = _flaky(KeyError, 2)
    policy = RetryPolicy(retry_on=(KeyError, ValueError), max_attempts=2, **FAST)
    with pytest.raises(KeyError):
        driver.invoke(_one(node, retry_policy=policy), {"a": 0})
    assert len(calls) == 2


def test_list_of_retry_policies_first_match_wins(driver):
    """With a list of policies, the first whose retry_on matches decides."""
    node, calls = _flaky(KeyError, 5)
    policies = [
        RetryPolicy(retry_on=ValueError, max_attempts=5, **FAST),
        RetryPolicy(retry_on=KeyError, max_attempts=2, **FAST),
    ]
    with pytest.raises(KeyError):
        driver.invoke(_one(node, retry_policy=policies), {"a": 0})
    assert len(calls) == 2


def test_async_node_timeout(driver):
    """An async node slower than timeout= raises NodeTimeoutError naming the node."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")

    async def slow(state: S) -> dict:
        await asyncio.sleep(2)
        return {"a": 1}

    start = time.perf_counter()
    with pytest.raises(NodeTimeoutError) as info:
        driver.invoke(_one(slow, timeout=0.05), {"a": 0})
    assert time.perf_counter() - start < 1.0
    err = info.value
    assert (err.node, err.kind, err.run_timeout) == ("node", "run", 0.05)
    assert "Node 'node' exceeded its run timeout of 0.050s" in str(err)
    assert not isinstance(err, TimeoutError)


def test_fast_async_node_within_timeout(driver):
    """An async node finishing within its timeout returns normally."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")

    async def quick(state: S) -> dict:
        await asyncio.sleep(0)
        return {"a": 7}

    assert driver.invoke(_one(quick, timeout=1.0), {"a": 0}) == {"a": 7}


def test_timeout_is_retried_with_policy(driver):
    """A timed-out attempt is retried under retry_on=NodeTimeoutError; the 2nd attempt wins."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")
    calls = []

    async def flaky(state: S) -> dict:
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(2)
        return {"a": len(calls)}

    policy = RetryPolicy(retry_on=NodeTimeoutError, **FAST)
    assert driver.invoke(_one(flaky, timeout=0.05, retry_policy=policy), {"a": 0}) == {"a": 2}
    assert len(calls) == 2


def test_sync_node_timeout_is_refused_at_compile():
    """A timeout on a sync node is refused when the graph compiles (a thread cannot be
    cancelled); an async node may have one."""

    def slow(state: S) -> dict:
        return {"a": 1}

    with pytest.raises(ValueError, match="only supported for async nodes") as info:
        _one(slow, timeout=0.05)
    assert "'node' is sync" in str(info.value)

    async def fine(state: S) -> dict:
        return {"a": 1}

    _one(fine, timeout=0.05)


def test_send_timeout_to_a_sync_node_fails_the_run(driver):
    """A ``Send(timeout=...)`` to a sync node cannot be checked at compile time: the run
    fails with the same error when the task starts."""
    from stepgraph.types import Send

    calls = []

    def work(state: S) -> dict:
        calls.append(1)
        return {"a": 1}

    g = StateGraph(S)
    g.add_node("work", work)
    g.add_conditional_edges(START, lambda s: [Send("work", s, timeout=1.0)])
    with pytest.raises(ValueError, match="'work' is sync"):
        driver.invoke(g.compile(), {"a": 0})
    assert calls == []


def test_parallel_sync_nodes_run_concurrently(driver):
    """Two sync nodes sleeping 0.3s each in one step finish in well under 0.6s."""

    def a(state: S) -> dict:
        time.sleep(0.3)
        return {"a": 1}

    def b(state: S) -> dict:
        time.sleep(0.3)
        return {"b": 2}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    start = time.perf_counter()
    assert driver.invoke(g.compile(), {"a": 0}) == {"a": 1, "b": 2}
    assert time.perf_counter() - start < 0.55


def test_parallel_async_nodes_run_concurrently(driver):
    """Two async nodes sleeping 0.3s each in one step finish in well under 0.6s."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")

    async def a(state: S) -> dict:
        await asyncio.sleep(0.3)
        return {"a": 1}

    async def b(state: S) -> dict:
        await asyncio.sleep(0.3)
        return {"b": 2}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    start = time.perf_counter()
    assert driver.invoke(g.compile(), {"a": 0}) == {"a": 1, "b": 2}
    assert time.perf_counter() - start < 0.55


def test_first_failure_cancels_async_siblings(driver):
    """When one async node fails, a slow async sibling is cancelled and the error surfaces fast."""
    if not driver.is_async:
        pytest.skip("async node needs the async driver")
    log = []

    async def fail(state: S) -> dict:
        await asyncio.sleep(0.05)
        raise ValueError("fail")

    async def slow(state: S) -> dict:
        try:
            await asyncio.sleep(2)
            log.append("finished")
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        return {"b": 1}

    g = StateGraph(S)
    g.add_node("fail", fail)
    g.add_node("slow", slow)
    g.add_edge(START, "fail")
    g.add_edge(START, "slow")
    start = time.perf_counter()
    with pytest.raises(ValueError, match="fail") as info:
        driver.invoke(g.compile(), {"a": 0})
    assert time.perf_counter() - start < 1.0
    assert log == ["cancelled"]
    assert any("'fail'" in n for n in info.value.__notes__)


def _fail_and_slow(fail_after: float, log: list):
    def fail(state: S) -> dict:
        time.sleep(fail_after)
        raise ValueError("fail")

    def slow(state: S) -> dict:
        time.sleep(0.1)
        log.append("sfinished")
        return {"b": 1}

    g = StateGraph(S)
    g.add_node("fail", fail)
    g.add_node("slow", slow)
    g.add_edge(START, "fail")
    g.add_edge(START, "slow")
    return g.compile()


def _finished_at_raise(driver, app, log: list, runs: int = 3) -> list:
    out = []
    for _ in range(runs):
        log.clear()
        with pytest.raises(ValueError, match="fail"):
            driver.invoke(app, {"a": 0})
        out.append(len(log))
        time.sleep(0.12)
    return out


def test_failure_waits_for_running_sync_sibling(driver):
    """A running sync sibling (not cancellable) finishes before a node's failure is raised."""
    log = []
    assert _finished_at_raise(driver, _fail_and_slow(0.03, log), log) == [1, 1, 1]


def test_all_sync_siblings_run_when_one_fails_at_once(driver):
    """Every sync task of a step runs to its end before a sibling's immediate failure is raised."""
    import operator
    from typing import Annotated

    class L(TypedDict):
        done: Annotated[list, operator.add]

    log = []

    def fail(state: L) -> dict:
        raise ValueError("fail")

    def sibling(i: int):
        def node(state: L) -> dict:
            time.sleep(0.02)
            log.append(i)
            return {"done": [i]}

        return node

    g = StateGraph(L)
    g.add_node("fail", fail)
    g.add_edge(START, "fail")
    for i in range(5):
        g.add_node(f"s{i}", sibling(i))
        g.add_edge(START, f"s{i}")
    app = g.compile()
    counts = []
    for _ in range(2):
        log.clear()
        with pytest.raises(ValueError, match="fail"):
            driver.invoke(app, {"done": []})
        counts.append(len(log))
        time.sleep(0.1)
    assert counts == [5, 5]
