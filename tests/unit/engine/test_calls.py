"""``@task`` calls with a ``CachePolicy``: the lookup and the store are cache effects
(``engine/caching.py``) the call performs itself: ``get``/``set`` in a sync call, awaited
``aget``/``aset`` in an async one, and never a blocking lookup on a running event loop."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from stepgraph.cache.memory import InMemoryCache
from stepgraph.cache.sqlite import SqliteCache
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine import caching
from stepgraph.engine.effects import CacheGet, CacheSet
from stepgraph.func import entrypoint, task
from stepgraph.types import CachePolicy


def _recording(base: type) -> type:
    """``base`` that records which cache API each call used, and on which thread."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.calls: list[tuple[str, int]] = []

        def get(self, keys: Any) -> Any:
            self.calls.append(("get", threading.get_ident()))
            return super().get(keys)

        def set(self, pairs: Any) -> None:
            self.calls.append(("set", threading.get_ident()))
            super().set(pairs)

        async def aget(self, keys: Any) -> Any:
            self.calls.append(("aget", threading.get_ident()))
            return super().get(keys)

        async def aset(self, pairs: Any) -> None:
            self.calls.append(("aset", threading.get_ident()))
            super().set(pairs)

    return Recording


@pytest.fixture(params=["memory", "sqlite"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return _recording(InMemoryCache)()
    return _recording(SqliteCache)(path=str(tmp_path / "cache.db"))


def _kinds(cache: Any) -> list[str]:
    return [kind for kind, _ in cache.calls]


def test_a_sync_call_looks_up_and_stores_with_the_sync_api(cache: Any) -> None:
    ran: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(x: int) -> int:
        ran.append(x)
        return x * x

    @entrypoint(cache=cache)
    def wf(xs: list[int]) -> list[int]:
        return [square(x).result() for x in xs]

    assert wf.invoke([1, 2]) == [1, 4]
    assert wf.invoke([2, 3]) == [4, 9]
    assert ran == [1, 2, 3]
    assert set(_kinds(cache)) == {"get", "set"}
    assert _kinds(cache).count("get") == 4 and _kinds(cache).count("set") == 3


def test_an_async_call_awaits_the_async_api(cache: Any) -> None:
    ran: list[int] = []

    @task(cache_policy=CachePolicy())
    async def square(x: int) -> int:
        ran.append(x)
        return x * x

    @entrypoint(cache=cache)
    async def wf(xs: list[int]) -> list[int]:
        return list(await asyncio.gather(*(square(x) for x in xs)))

    async def main() -> None:
        assert await wf.ainvoke([1, 2]) == [1, 4]
        assert await wf.ainvoke([2, 3]) == [4, 9]

    asyncio.run(main())
    assert ran == [1, 2, 3]
    assert set(_kinds(cache)) == {"aget", "aset"}
    assert _kinds(cache).count("aget") == 4 and _kinds(cache).count("aset") == 3


def test_a_sync_call_in_an_async_run_never_blocks_the_event_loop(cache: Any) -> None:
    ran: list[int] = []
    loop_thread: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(x: int) -> int:
        ran.append(x)
        return x * x

    @entrypoint(cache=cache)
    async def wf(xs: list[int]) -> list[int]:
        loop_thread.append(threading.get_ident())
        return [await square(x) for x in xs]

    async def main() -> None:
        assert await wf.ainvoke([1, 2]) == [1, 4]
        assert await wf.ainvoke([2, 1]) == [4, 1]

    asyncio.run(main())
    assert ran == [1, 2]
    assert set(_kinds(cache)) == {"get", "set"}
    assert all(thread not in loop_thread for _, thread in cache.calls)


def test_a_cached_call_result_is_stored_as_its_return(cache: Any) -> None:
    """A hit is stored like a call that ran: a resumed caller finds it without the cache."""
    ran: list[int] = []

    @task(cache_policy=CachePolicy())
    def double(x: int) -> int:
        ran.append(x)
        return 2 * x

    @entrypoint(checkpointer=InMemorySaver(), cache=cache)
    def wf(x: int) -> int:
        return double(x).result()

    assert wf.invoke(3, {"configurable": {"thread_id": "a"}}) == 6
    assert wf.invoke(3, {"configurable": {"thread_id": "b"}}) == 6
    assert ran == [3]
    history = wf.checkpointer.list({"configurable": {"thread_id": "b"}})
    writes = [w for saved in history for w in saved.pending_writes or ()]
    assert [value for _, chan, value in writes if chan == "__return__"] == [6]


def test_the_call_effects_are_pure() -> None:
    """Making a lookup or an entry performs nothing; the effects carry the cache and key."""

    class Untouchable(InMemoryCache):
        def get(self, keys: Any) -> Any:
            raise AssertionError("looked up while making the effect")

        def set(self, pairs: Any) -> None:
            raise AssertionError("stored while making the effect")

    cache = Untouchable()

    @task(cache_policy=CachePolicy(ttl=5))
    def inc(x: int) -> int:
        return x + 1

    class Run:
        graph = type("G", (), {"cache": cache})()

    class Call:
        node = inc.node
        input = ((1,), {})
        run = Run()

    get, hit = caching.call_lookup(Call())  # type: ignore[misc, arg-type]
    assert isinstance(get, CacheGet) and get.cache is cache and hit == []
    key = caching.call_key(inc.node, (1,), {})
    assert get.keys == [key]
    assert get.then({key: 2}) == () and hit == [2]
    (entry,) = caching.call_entry(Call(), 2)  # type: ignore[arg-type]
    assert isinstance(entry, CacheSet) and entry.entries == {key: (2, 5)}
