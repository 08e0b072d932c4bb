"""``TimeoutPolicy`` values: seconds or ``timedelta``, checked where they are given."""

from datetime import timedelta

import pytest

from stepgraph.engine.callable import coerce_callable
from stepgraph.engine.timeout_support import natively_async
from stepgraph.pregel import PregelNode
from stepgraph.types import Send, TimeoutPolicy


def test_timedelta_is_stored_as_seconds():
    assert TimeoutPolicy(idle_timeout=timedelta(milliseconds=250)).idle_timeout == 0.25
    assert TimeoutPolicy.coerce(timedelta(seconds=2)) == TimeoutPolicy(run_timeout=2.0)
    assert TimeoutPolicy.coerce(1) == TimeoutPolicy(run_timeout=1.0)


def test_send_and_node_coerce_their_timeout():
    assert Send("n", None, timeout=timedelta(milliseconds=250)).timeout == TimeoutPolicy(run_timeout=0.25)
    assert PregelNode(channels="x", triggers=["x"], timeout=3).timeout == TimeoutPolicy(run_timeout=3.0)
    with pytest.raises(ValueError, match="greater than 0"):
        Send("n", None, timeout=0)
    with pytest.raises(ValueError, match="greater than 0"):
        PregelNode(channels="x", triggers=["x"], timeout=timedelta(0))


def test_which_bodies_a_timeout_can_stop():
    async def a(x):
        return x

    def s(x):
        return x

    class AsyncRunnable:
        def invoke(self, x, config=None):
            return x

        async def ainvoke(self, x, config=None):
            return x

    assert natively_async(coerce_callable(a))
    assert not natively_async(coerce_callable(s))
    assert natively_async(coerce_callable(AsyncRunnable()))


def test_langchain_runnables_need_native_async():
    runnables = pytest.importorskip("langchain_core.runnables")

    async def a(x):
        return x

    def s(x):
        return x

    lam = runnables.RunnableLambda
    assert natively_async(coerce_callable(lam(a).with_config(tags=["t"])))
    assert not natively_async(coerce_callable(lam(s).with_config(tags=["t"])))
    assert not natively_async(coerce_callable(runnables.RunnableParallel(x=lam(s), y=lam(a))))
    assert natively_async(coerce_callable(lam(a) | lam(a)))
    assert not natively_async(coerce_callable(lam(a) | lam(s)))
