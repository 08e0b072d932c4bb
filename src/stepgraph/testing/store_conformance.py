"""A conformance suite any ``BaseStore`` can run (needs pytest and pytest-asyncio).

Subclass ``StoreConformance`` with a ``make_store`` fixture: a factory such that
``make_store(index=None, ttl=None)`` returns (or awaits to) a fresh, empty store, e.g.
``return lambda **kwargs: MyStore(**kwargs)``. Each test runs through the sync API (in a
worker thread, so loop-bound stores work too) and through the async twins. TTL tests drive
the store's ``clock`` attribute (epoch seconds); stores without one skip them.
"""

from __future__ import annotations

import asyncio
import inspect
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from stepgraph.store import base as sb

__all__ = ["VOCAB", "FakeClock", "StoreAPI", "StoreConformance", "embed_texts"]

VOCAB = ("cat", "dog", "fish", "bird")


def embed_texts(texts: list[str]) -> list[list[float]]:
    """A deterministic embedding: how often each ``VOCAB`` word occurs in the text."""
    return [[float(text.lower().count(word)) for word in VOCAB] for text in texts]


async def aembed_texts(texts: list[str]) -> list[list[float]]:
    """``embed_texts`` as a coroutine function."""
    return embed_texts(texts)


_LC = SimpleNamespace(embed_documents=embed_texts, embed_query=lambda t: embed_texts([t])[0])
EMBEDDERS = {"function": embed_texts, "async": aembed_texts, "object": _LC}
"""The forms ``IndexConfig.embed`` takes: a function, a coroutine function, an Embeddings."""


class FakeClock:
    """A settable clock: ``advance(minutes)`` moves it forward."""

    now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += minutes * 60


class StoreAPI:
    """Calls a store through its sync API (in a worker thread) or its async API."""

    def __init__(self, store: Any, mode: str) -> None:
        self.store = store
        self.mode = mode

    def __getattr__(self, name: str) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.mode == "async":
                return await getattr(self.store, "a" + name)(*args, **kwargs)
            return await asyncio.to_thread(getattr(self.store, name), *args, **kwargs)

        return call

    def clock(self) -> FakeClock:
        """Install and return a ``FakeClock`` (skips the test if the store has no clock)."""
        if not getattr(self.store, "supports_ttl", False) or not hasattr(self.store, "clock"):
            pytest.skip("the store has no TTL support or no replaceable clock")
        self.store.clock = FakeClock()
        return self.store.clock

    async def keys(self, prefix: tuple[str, ...] = (), **kwargs: Any) -> list[str]:
        """The keys ``search`` returns."""
        return [item.key for item in await self.search(prefix, **kwargs)]

    async def scored(self, query: str, **kwargs: Any) -> list[tuple[str, float | None]]:
        """``(key, score rounded to 4 places)`` of a search under ``("d",)`` for ``query``."""
        found = await self.search(("d",), query=query, **kwargs)
        return [(i.key, None if i.score is None else round(i.score, 4)) for i in found]


async def fill(api: StoreAPI, ns: tuple[str, ...], values: dict[str, dict]) -> None:
    """Put each ``key: value`` of ``values`` in ``ns``, in order."""
    for key, value in values.items():
        await api.put(ns, key, value)


class StoreConformance:
    """The behaviour every stepgraph store has (a LangGraph-compatible superset)."""

    pytestmark = pytest.mark.asyncio

    @pytest.fixture(params=["sync", "async"])
    def open_api(self, request: pytest.FixtureRequest, make_store: Any) -> Any:
        async def open_(**kwargs: Any) -> StoreAPI:
            store = make_store(**kwargs)
            return StoreAPI(await store if inspect.isawaitable(store) else store, request.param)

        return open_

    @pytest.fixture
    async def api(self, open_api: Any) -> StoreAPI:
        return await open_api()

    async def semantic(self, open_api: Any, embed: Any = embed_texts, **index: Any) -> StoreAPI:
        """A store indexing ``index`` (default: the whole value) with ``embed``."""
        return await open_api(index={"dims": len(VOCAB), "embed": embed, **index})

    async def test_put_then_get_round_trip(self, api: StoreAPI) -> None:
        """get returns an Item (str key, namespace tuple, aware times) or None, creating nothing."""
        value = {"text": "héllo", "n": 1.5, "ok": True, "none": None, "nest": {"l": [1, [2]]}}
        await api.put(("users", "u1"), "prefs", value)
        item = await api.get(("users", "u1"), "prefs")
        assert isinstance(item, sb.Item) and not isinstance(item, sb.SearchItem)
        assert (item.namespace, item.key, item.value) == (("users", "u1"), "prefs", value)
        assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
        await api.put(("a",), 7, {"v": 1})  # keys are coerced with str()
        assert (await api.get(("a",), "7")).key == "7" and (await api.get(("a",), 7)).key == "7"
        assert await api.get(("a",), "missing") is None and await api.get(("b",), "k") is None
        assert await api.list_namespaces() == [("a",), ("users", "u1")]  # gets create nothing

    async def test_update_keeps_created_at(self, api: StoreAPI) -> None:
        """An update replaces the value and updated_at (from the store clock), not created_at."""
        clock = api.clock()
        await api.put(("a",), "k", {"v": 1})
        first = await api.get(("a",), "k")
        assert first.created_at == datetime.fromtimestamp(clock.now, UTC)
        clock.advance(1)
        await api.put(("a",), "k", {"w": 2})
        second = await api.get(("a",), "k")
        assert second.value == {"w": 2} and second.created_at == first.created_at
        assert (second.updated_at - first.updated_at).total_seconds() == 60

    async def test_delete_removes_item_and_emptied_namespace(self, api: StoreAPI) -> None:
        """delete and put(None) remove the item; an emptied namespace is no longer listed."""
        await fill(api, ("a",), {"k1": {"v": 1}, "k2": {"v": 2}})
        await api.put(("b",), "k", {"v": 3})
        await api.delete(("a",), "k1")
        await api.delete(("a",), "missing")
        assert await api.get(("a",), "k1") is None
        assert await api.list_namespaces() == [("a",), ("b",)]
        await api.delete(("a",), "k2")
        assert await api.list_namespaces() == [("b",)] and await api.keys(("a",)) == []
        await api.put(("b",), "k", None)  # put(None) deletes too
        await api.batch([sb.PutOp(("b",), "k2", {}), sb.PutOp(("b",), "k2", None)])
        assert await api.list_namespaces() == []

    async def test_values_are_not_aliased(self, api: StoreAPI) -> None:
        """Mutating a value after put, or an item read back, never changes what is stored."""
        value = {"items": [{"n": 1}]}
        await api.put(("a",), "k", value)
        value["items"][0]["n"] = 99
        (await api.get(("a",), "k")).value["items"].append("junk")
        (await api.search(("a",)))[0].value["items"].clear()
        assert (await api.get(("a",), "k")).value == {"items": [{"n": 1}]}

    @pytest.mark.parametrize(
        "namespace",
        [(), ("a.b",), ("",), ("ok", ""), (1,), ("ok", None), ("langgraph",), ("langgraph", "x")],
    )
    async def test_put_rejects_invalid_namespace(self, api: StoreAPI, namespace: tuple) -> None:
        """put raises InvalidNamespaceError (a ValueError) and stores nothing."""
        with pytest.raises(sb.InvalidNamespaceError) as info:
            await api.put(namespace, "k", {"v": 1})
        assert isinstance(info.value, ValueError) and info.value.code == "SG431"
        assert await api.list_namespaces() == []

    async def test_reads_validate_labels_but_allow_reserved_root(self, api: StoreAPI) -> None:
        """get/search/delete/list_namespaces reject bad labels; only put checks the root."""
        for call in (
            api.get(("a.b",), "k"), api.search(("",)), api.delete((1,), "k"),
            api.list_namespaces(prefix=("a.b",)), api.list_namespaces(suffix=("",)),
        ):  # fmt: skip
            with pytest.raises(sb.InvalidNamespaceError):
                await call
        assert await api.get(("langgraph",), "k") is None and await api.get((), "k") is None

    async def test_search_matches_namespace_prefix(self, api: StoreAPI) -> None:
        """A prefix matches its namespace and those below, label by label; () matches all."""
        for ns in [("a",), ("a", "b"), ("ab",), ("b", "a"), ("a", "b", "c")]:
            await api.put(ns, "k", {"ns": list(ns)})
        found = [item.namespace for item in await api.search(("a",))]
        assert found == [("a",), ("a", "b"), ("a", "b", "c")]
        assert [i.namespace for i in await api.search(("a", "b"))] == [("a", "b"), ("a", "b", "c")]
        assert len(await api.search(())) == 5

    async def test_search_insertion_order_and_pages(self, api: StoreAPI) -> None:
        """Unranked results (also a query without index) come in insertion order, paged."""
        for i in range(7):
            await api.put(("n", str(i % 2)), f"k{i}", {"i": i})
        assert await api.keys(limit=100) == [f"k{i}" for i in range(7)]
        assert await api.keys() == [f"k{i}" for i in range(7)]
        assert await api.keys(limit=3, offset=2) == ["k2", "k3", "k4"]
        assert await api.keys(limit=3, offset=6) == ["k6"]
        assert await api.keys(limit=2, offset=10) == []
        await api.put(("n", "0"), "k0", {"i": 9})  # an update keeps its place...
        await api.delete(("n", "1"), "k1")
        await api.put(("n", "1"), "k1", {})  # ...a re-put after delete moves to the end
        assert await api.keys(limit=4) == ["k0", "k2", "k3", "k4"]
        assert await api.keys(offset=5) == ["k6", "k1"]
        assert [i.score for i in await api.search((), query="k1")] == [None] * 7  # no index

    async def test_filter_equality(self, api: StoreAPI) -> None:
        """Scalar filters match by equality, every key must match; pages follow filtering."""
        await fill(api, ("a",), {
            "1": {"color": "red", "size": 1}, "2": {"color": "blue", "size": 1},
            "3": {"color": "red", "size": 2}, "4": {"size": 1},
        })  # fmt: skip
        assert await api.keys(("a",), filter={"color": "red"}) == ["1", "3"]
        assert await api.keys(("a",), filter={"color": "red", "size": 1}) == ["1"]
        assert await api.keys(("a",), filter={"color": "green"}) == []
        assert await api.keys(("a",), filter={"size": 1}, limit=2, offset=1) == ["2", "4"]

    @pytest.mark.parametrize(
        ("filter", "expected"),
        [
            ({"n": {"$eq": 2}}, ["2"]),
            ({"n": {"$ne": 2}}, ["1", "3", "none", "text"]),
            ({"n": {"$gt": 1}}, ["2", "3"]),
            ({"n": {"$gte": 2}}, ["2", "3"]),
            ({"n": {"$lt": 2}}, ["1"]),
            ({"n": {"$lte": 2.0}}, ["1", "2"]),
            ({"n": {"$gt": 1, "$lt": 3}}, ["2"]),
        ],
    )
    async def test_filter_operators(self, api: StoreAPI, filter: dict, expected: list) -> None:
        """$eq $ne $gt $gte $lt $lte compare numbers; missing or text values never match ranges."""
        await fill(api, ("a",), {
            "1": {"n": 1}, "2": {"n": 2}, "3": {"n": 3.5}, "none": {}, "text": {"n": "abc"},
        })  # fmt: skip
        assert await api.keys(("a",), filter=filter) == expected

    async def test_filter_nested_dict_and_exact_list(self, api: StoreAPI) -> None:
        """Dict filters match nested fields, lists the exact list; unknown $ops raise."""
        await fill(api, ("a",), {
            "1": {"meta": {"lang": "en", "n": 3}, "tags": ["x", "y"]},
            "2": {"meta": {"lang": "fr", "n": 1}, "tags": ["x"]},
            "3": {"meta": "en", "tags": ["y", "x"]},
        })  # fmt: skip
        assert await api.keys(("a",), filter={"meta": {"lang": "en"}}) == ["1"]
        assert await api.keys(("a",), filter={"meta": {"n": {"$gte": 1}}}) == ["1", "2"]
        assert await api.keys(("a",), filter={"tags": ["x", "y"]}) == ["1"]
        assert await api.keys(("a",), filter={"tags": ["x"]}) == ["2"]
        with pytest.raises(ValueError) as info:  # an unknown operator: SG432
            await api.search(("a",), filter={"n": {"$regex": "x"}})
        assert info.value.code == "SG432"

    async def test_list_namespaces(self, api: StoreAPI) -> None:
        """Namespaces are sorted and distinct; prefix/suffix take '*'; max_depth truncates."""
        ax1, ax2, ay, az, bx1 = ("a", "x", "1"), ("a", "x", "2"), ("a", "y"), ("a-z",), ("b", "x", "1")  # fmt: skip
        for ns in [bx1, ay, ax1, ax2, az]:
            await api.put(ns, "k1", {})
            await api.put(ns, "k2", {})
        assert await api.list_namespaces() == [ax1, ax2, ay, az, bx1]
        assert await api.list_namespaces(prefix=("a",)) == [ax1, ax2, ay]
        assert await api.list_namespaces(prefix=("*", "x")) == [ax1, ax2, bx1]
        assert await api.list_namespaces(suffix=("1",)) == [ax1, bx1]
        assert await api.list_namespaces(suffix=("x", "*")) == [ax1, ax2, bx1]
        assert await api.list_namespaces(prefix=("a",), suffix=("2",)) == [ax2]
        assert await api.list_namespaces(max_depth=2) == [ax1[:2], ay, az, bx1[:2]]
        assert await api.list_namespaces(max_depth=1, limit=2, offset=1) == [az, ("b",)]
        assert await api.list_namespaces(prefix=(*ax1, "deeper")) == []

    async def test_batch_results_follow_ops_and_see_prior_state(self, api: StoreAPI) -> None:
        """Results come in op order; reads see the state before the batch; last put wins."""
        await api.put(("a",), "old", {"v": 0})
        results = await api.batch([
            sb.PutOp(("a",), "new", {"v": 1}),
            sb.GetOp(("a",), "new"),
            sb.SearchOp(("a",)),
            sb.PutOp(("a",), "new", {"v": 2}),
            sb.ListNamespacesOp(),
            sb.GetOp(("a",), "old"),
        ])  # fmt: skip
        assert results[0] is None and results[1] is None and results[3] is None
        assert [i.key for i in results[2]] == ["old"] and results[4] == [("a",)]
        assert results[5].value == {"v": 0}
        assert (await api.get(("a",), "new")).value == {"v": 2}

    async def test_expired_items_are_invisible(self, api: StoreAPI) -> None:
        """Expired items are gone from get, search and list_namespaces; sweep_ttl deletes them."""
        clock = api.clock()
        await api.put(("t",), "short", {"v": 1}, ttl=1)
        await api.put(("t", "sub"), "short", {"v": 1}, ttl=1)
        await api.put(("t",), "long", {"v": 2}, ttl=10)
        clock.advance(0.5)
        assert (await api.get(("t",), "short", refresh_ttl=False)) is not None
        clock.advance(0.6)
        assert await api.get(("t",), "short") is None
        assert await api.keys(("t",)) == ["long"]
        assert await api.list_namespaces() == [("t",)]
        assert await api.sweep_ttl() == 2 and await api.sweep_ttl() == 0
        assert await api.keys(("t",)) == ["long"]

    async def test_reads_refresh_ttl(self, api: StoreAPI) -> None:
        """get and search restart an item's TTL unless refresh_ttl=False."""
        clock = api.clock()
        await api.put(("t",), "g", {}, ttl=1)
        await api.put(("t", "s"), "s", {}, ttl=1)
        await api.put(("t",), "n", {}, ttl=1)
        clock.advance(0.8)
        await api.get(("t",), "g")
        await api.search(("t", "s"))
        await api.get(("t",), "n", refresh_ttl=False)
        await api.search(("t",), refresh_ttl=False)
        clock.advance(0.8)
        assert await api.keys(("t",), refresh_ttl=False) == ["g", "s"]

    async def test_ttl_config_defaults(self, open_api: Any) -> None:
        """default_ttl applies when put has no ttl; ttl=None opts out; refresh_on_read=False."""
        api = await open_api(ttl={"default_ttl": 1, "refresh_on_read": False})
        clock = api.clock()
        await api.put(("t",), "default", {})
        await api.put(("t",), "forever", {}, ttl=None)
        clock.advance(0.8)
        assert await api.get(("t",), "default") is not None  # does not refresh by default
        clock.advance(0.3)
        assert await api.keys(("t",)) == ["forever"]

    async def test_writes_restart_or_clear_ttl(self, api: StoreAPI) -> None:
        """A put sets the item's new TTL; put over an expired item creates a new item."""
        clock = api.clock()
        await api.put(("t",), "k", {"v": 1}, ttl=1)
        await api.put(("t",), "k", {"v": 2})
        clock.advance(5)
        assert (await api.get(("t",), "k")).value == {"v": 2}
        await api.put(("t",), "gone", {"v": 1}, ttl=1)
        clock.advance(2)
        await api.put(("t",), "gone", {"v": 2})
        item = await api.get(("t",), "gone")
        assert item.value == {"v": 2} and item.created_at == item.updated_at

    @pytest.mark.parametrize(
        ("value", "ttl"), [(["no"], None), ("text", None), ({}, 0), ({}, -1), ({}, "5"), ({}, True)]
    )
    async def test_bad_value_or_ttl_raises(self, api: StoreAPI, value: Any, ttl: Any) -> None:
        """A non-dict value, or a ttl not a positive number of minutes, raises SG436."""
        with pytest.raises(sb.StoreError) as info:
            await api.put(("t",), "k", value, ttl=ttl)
        assert info.value.code == "SG436" and await api.list_namespaces() == []

    @pytest.mark.parametrize("embedder", sorted(EMBEDDERS))
    async def test_query_ranks_by_cosine_similarity(self, open_api: Any, embedder: str) -> None:
        """With an index, a query ranks items by cosine similarity; scores are floats."""
        api = await self.semantic(open_api, EMBEDDERS[embedder])
        await fill(api, ("d",), {"mix": {"t": "cat dog"}, "dog": {"t": "dog"}, "cat": {"t": "cat"}})
        assert await api.scored("cat") == [("cat", 1.0), ("mix", 0.7071), ("dog", 0.0)]

    async def test_unembedded_items_come_last_without_score(self, open_api: Any) -> None:
        """Items put with index=False follow the ranked ones, in order, with score None."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d",), "off", {"t": "cat"}, index=False)
        await api.put(("d",), "nofield", {"other": "cat"})
        await api.put(("d",), "on", {"t": "dog cat"})
        assert await api.scored("cat") == [("on", 0.7071), ("off", None), ("nofield", None)]
        assert await api.scored("cat", limit=1, offset=1) == [("off", None)]

    async def test_fields_paths_and_per_put_index(self, open_api: Any) -> None:
        """Only configured paths are embedded ([*]: each element, best one scores);
        put(index=[...]) overrides them per item."""
        api = await self.semantic(open_api, fields=["notes[*].text", "meta.title"])
        await api.put(("d",), "a", {"notes": [{"text": "dog"}, {"text": "fish"}], "body": "cat"})
        await api.put(("d",), "b", {"notes": [{"text": "cat dog"}], "meta": {"title": "fish"}})
        await api.put(("d",), "c", {"notes": [{"text": "dog"}], "body": "cat"}, index=["body"])
        assert await api.scored("fish") == [("a", 1.0), ("b", 1.0), ("c", 0.0)]
        assert await api.scored("dog") == [("a", 1.0), ("b", 0.7071), ("c", 0.0)]
        assert await api.scored("cat") == [("c", 1.0), ("b", 0.7071), ("a", 0.0)]

    async def test_query_with_filter_prefix_and_pages(self, open_api: Any) -> None:
        """Ranking applies after the namespace prefix and the filter, before limit/offset."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d", "x"), "1", {"t": "cat", "keep": True})
        await api.put(("d", "y"), "2", {"t": "cat dog", "keep": True})
        await api.put(("d", "x"), "3", {"t": "cat cat", "keep": False})
        await api.put(("e",), "4", {"t": "cat", "keep": True})
        assert await api.scored("cat", filter={"keep": True}) == [("1", 1.0), ("2", 0.7071)]
        assert await api.scored("cat", limit=1, offset=1) == [("3", 1.0)]

    async def test_updates_reindex(self, open_api: Any) -> None:
        """Updating an item re-embeds it; an update with index=False drops its vectors."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d",), "a", {"t": "dog"})
        await api.put(("d",), "b", {"t": "cat dog"})
        await api.put(("d",), "a", {"t": "cat"})
        assert await api.scored("cat") == [("a", 1.0), ("b", 0.7071)]
        await api.put(("d",), "a", {"t": "cat"}, index=False)
        assert await api.scored("cat") == [("b", 0.7071), ("a", None)]

    async def test_wrong_embedding_size_raises(self, open_api: Any) -> None:
        """Vectors whose length differs from index['dims'] raise StoreError SG433."""
        api = await open_api(index={"dims": 3, "embed": embed_texts})
        with pytest.raises(sb.StoreError) as info:
            await api.put(("d",), "a", {"t": "cat"})
        assert info.value.code == "SG433"
        assert await api.get(("d",), "a") is None
