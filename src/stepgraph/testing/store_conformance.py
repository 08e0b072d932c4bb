"""A conformance suite any ``BaseStore`` can run (needs pytest and pytest-asyncio).

Subclass ``StoreConformance`` and give it a ``make_store`` fixture returning a factory:
``make_store(index=None, ttl=None)`` returns (or, for async stores, awaits to) a fresh,
empty store built with those settings::

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def make_store(self):
            return lambda **kwargs: MyStore(**kwargs)

Every test runs twice: through the sync API (from a worker thread, so stores bound to an
event loop work too) and through the async twins. TTL tests drive the store's ``clock``
attribute (seconds since the epoch) and are skipped for stores without one.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from stepgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchItem,
    SearchOp,
    StoreError,
)

__all__ = ["VOCAB", "FakeClock", "StoreAPI", "StoreConformance", "embed_texts"]

VOCAB = ("cat", "dog", "fish", "bird")


def embed_texts(texts: list[str]) -> list[list[float]]:
    """A deterministic embedding: how often each ``VOCAB`` word occurs in the text."""
    return [[float(text.lower().count(word)) for word in VOCAB] for text in texts]


async def aembed_texts(texts: list[str]) -> list[list[float]]:
    """``embed_texts`` as a coroutine function."""
    return embed_texts(texts)


class CountingEmbeddings:
    """An ``Embeddings``-like object (sync methods only) built on ``embed_texts``."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed_texts(texts)

    def embed_query(self, text: str) -> list[float]:
        return embed_texts([text])[0]


EMBEDDERS = {"function": embed_texts, "async": aembed_texts, "object": CountingEmbeddings()}


class FakeClock:
    """A settable clock: ``advance(minutes)`` moves it forward."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

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
        return [item.key for item in await self.search(prefix, **kwargs)]


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

    # --- put / get / delete ---------------------------------------------------------------
    async def test_get_missing_returns_none_and_creates_nothing(self, api: StoreAPI) -> None:
        """get of a missing key or namespace is None and leaves no namespace behind."""
        assert await api.get(("nobody",), "k") is None
        await api.put(("users",), "u1", {"v": 1})
        assert await api.get(("users",), "other") is None
        assert await api.list_namespaces() == [("users",)]

    async def test_put_then_get_round_trip(self, api: StoreAPI) -> None:
        """get returns an Item with the value, key, namespace tuple and equal UTC times."""
        value = {"text": "héllo", "n": 1.5, "ok": True, "none": None, "nest": {"l": [1, [2]]}}
        await api.put(("users", "u1"), "prefs", value)
        item = await api.get(("users", "u1"), "prefs")
        assert isinstance(item, Item) and not isinstance(item, SearchItem)
        assert (item.namespace, item.key, item.value) == (("users", "u1"), "prefs", value)
        assert (
            item.created_at == item.updated_at and item.created_at.utcoffset().total_seconds() == 0
        )

    async def test_update_keeps_created_at(self, api: StoreAPI) -> None:
        """Putting an existing key replaces its value, bumps updated_at, keeps created_at."""
        clock = api.clock()
        await api.put(("a",), "k", {"v": 1})
        first = await api.get(("a",), "k")
        clock.advance(1)
        await api.put(("a",), "k", {"w": 2})
        second = await api.get(("a",), "k")
        assert second.value == {"w": 2} and second.created_at == first.created_at
        assert (second.updated_at - first.updated_at).total_seconds() == 60

    async def test_key_is_coerced_to_str(self, api: StoreAPI) -> None:
        """Non-str keys are stored and read as str(key)."""
        await api.put(("a",), 7, {"v": 1})
        item = await api.get(("a",), "7")
        assert item is not None and item.key == "7"
        assert (await api.get(("a",), 7)).key == "7"

    async def test_delete_removes_item_and_emptied_namespace(self, api: StoreAPI) -> None:
        """delete removes the item; a namespace with no items left is no longer listed."""
        await api.put(("a",), "k1", {"v": 1})
        await api.put(("a",), "k2", {"v": 2})
        await api.put(("b",), "k", {"v": 3})
        await api.delete(("a",), "k1")
        await api.delete(("a",), "missing")
        assert await api.get(("a",), "k1") is None
        assert await api.list_namespaces() == [("a",), ("b",)]
        await api.delete(("a",), "k2")
        assert await api.list_namespaces() == [("b",)]
        assert await api.keys(("a",)) == []

    async def test_put_none_deletes(self, api: StoreAPI) -> None:
        """put(value=None) and a PutOp with value None delete the item."""
        await api.put(("a",), "k", {"v": 1})
        await api.put(("a",), "k", None)
        assert await api.get(("a",), "k") is None
        await api.put(("a",), "k", {"v": 1})
        await api.batch([PutOp(("a",), "k", None)])
        assert await api.get(("a",), "k") is None

    async def test_values_are_not_aliased(self, api: StoreAPI) -> None:
        """Mutating a value after put, or an item read back, never changes what is stored."""
        value = {"items": [{"n": 1}]}
        await api.put(("a",), "k", value)
        value["items"][0]["n"] = 99
        item = await api.get(("a",), "k")
        item.value["items"].append("junk")
        (await api.search(("a",)))[0].value["items"].clear()
        assert (await api.get(("a",), "k")).value == {"items": [{"n": 1}]}

    @pytest.mark.parametrize(
        "namespace",
        [(), ("a.b",), ("",), ("ok", ""), (1,), ("ok", None), ("langgraph",), ("langgraph", "x")],
    )
    async def test_put_rejects_invalid_namespace(self, api: StoreAPI, namespace: tuple) -> None:
        """put raises InvalidNamespaceError (a ValueError) and stores nothing."""
        with pytest.raises(InvalidNamespaceError) as info:
            await api.put(namespace, "k", {"v": 1})
        assert isinstance(info.value, ValueError) and info.value.code == "SG431"
        assert await api.list_namespaces() == []

    async def test_reads_validate_labels_but_allow_reserved_root(self, api: StoreAPI) -> None:
        """get/search/delete/list_namespaces reject bad labels; only put checks the root."""
        for call in (
            api.get(("a.b",), "k"), api.search(("",)), api.delete((1,), "k"),
            api.list_namespaces(prefix=("a.b",)), api.list_namespaces(suffix=("",)),
        ):  # fmt: skip
            with pytest.raises(InvalidNamespaceError):
                await call
        assert await api.get(("langgraph",), "k") is None
        assert await api.get((), "k") is None

    async def test_put_rejects_non_dict_value(self, api: StoreAPI) -> None:
        """A value that is not a mapping raises StoreError SG436."""
        with pytest.raises(StoreError) as info:
            await api.put(("a",), "k", ["not", "a", "dict"])
        assert info.value.code == "SG436"

    async def test_item_dict_is_json_ready(self, api: StoreAPI) -> None:
        """Item.dict() has a list namespace and ISO times; SearchItem.dict() adds score."""
        await api.put(("a", "b"), "k", {"v": 1})
        item = await api.get(("a", "b"), "k")
        data = json.loads(json.dumps(item.dict()))
        assert data["namespace"] == ["a", "b"] and data["key"] == "k"
        assert datetime.fromisoformat(data["created_at"]) == item.created_at
        found = (await api.search(("a",)))[0]
        assert isinstance(found, SearchItem) and found.dict()["score"] is None
        assert found == item

    # --- search ------------------------------------------------------------------------------
    async def test_search_matches_namespace_prefix(self, api: StoreAPI) -> None:
        """A prefix matches its namespace and those below, label by label; () matches all."""
        for ns in [("a",), ("a", "b"), ("ab",), ("b", "a"), ("a", "b", "c")]:
            await api.put(ns, "k", {"ns": list(ns)})
        found = [item.namespace for item in await api.search(("a",))]
        assert found == [("a",), ("a", "b"), ("a", "b", "c")]
        assert [i.namespace for i in await api.search(("a", "b"))] == [("a", "b"), ("a", "b", "c")]
        assert len(await api.search(())) == 5

    async def test_search_insertion_order_and_pages(self, api: StoreAPI) -> None:
        """Unranked results come in insertion order (across namespaces), paged by limit/offset."""
        for i in range(7):
            await api.put(("n", str(i % 2)), f"k{i}", {"i": i})
        assert await api.keys(limit=100) == [f"k{i}" for i in range(7)]
        assert await api.keys() == [f"k{i}" for i in range(7)]
        assert await api.keys(limit=3, offset=2) == ["k2", "k3", "k4"]
        assert await api.keys(limit=3, offset=6) == ["k6"]
        assert await api.keys(limit=2, offset=10) == []

    async def test_update_keeps_search_position(self, api: StoreAPI) -> None:
        """Updating an item keeps its place; deleting and re-putting moves it to the end."""
        await fill(api, ("a",), {"k1": {}, "k2": {}, "k3": {}})
        await api.put(("a",), "k1", {"v": 2})
        assert await api.keys(("a",)) == ["k1", "k2", "k3"]
        await api.delete(("a",), "k1")
        await api.put(("a",), "k1", {"v": 3})
        assert await api.keys(("a",)) == ["k2", "k3", "k1"]

    async def test_filter_equality(self, api: StoreAPI) -> None:
        """Scalar filters match by equality; every key of the filter must match."""
        await fill(api, ("a",), {
            "1": {"color": "red", "size": 1}, "2": {"color": "blue", "size": 1},
            "3": {"color": "red", "size": 2}, "4": {"size": 1},
        })  # fmt: skip
        assert await api.keys(("a",), filter={"color": "red"}) == ["1", "3"]
        assert await api.keys(("a",), filter={"color": "red", "size": 1}) == ["1"]
        assert await api.keys(("a",), filter={"color": "green"}) == []

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
        """A dict filter matches nested fields; a list filter matches the exact list."""
        await fill(api, ("a",), {
            "1": {"meta": {"lang": "en", "n": 3}, "tags": ["x", "y"]},
            "2": {"meta": {"lang": "fr", "n": 1}, "tags": ["x"]},
            "3": {"meta": "en", "tags": ["y", "x"]},
        })  # fmt: skip
        assert await api.keys(("a",), filter={"meta": {"lang": "en"}}) == ["1"]
        assert await api.keys(("a",), filter={"meta": {"n": {"$gte": 1}}}) == ["1", "2"]
        assert await api.keys(("a",), filter={"tags": ["x", "y"]}) == ["1"]
        assert await api.keys(("a",), filter={"tags": ["x"]}) == ["2"]

    async def test_filtered_search_pages_after_filtering(self, api: StoreAPI) -> None:
        """limit and offset apply to the filtered results."""
        for i in range(12):
            await api.put(("a",), f"k{i:02}", {"even": i % 2 == 0})
        keys = await api.keys(("a",), filter={"even": True}, limit=2, offset=3)
        assert keys == ["k06", "k08"]

    async def test_unknown_filter_operator_raises(self, api: StoreAPI) -> None:
        """An unknown $operator raises StoreError SG432 (a ValueError), even with no items."""
        with pytest.raises(ValueError) as info:
            await api.search(("a",), filter={"n": {"$regex": "x"}})
        assert info.value.code == "SG432"

    # --- list_namespaces ---------------------------------------------------------------------
    async def test_list_namespaces(self, api: StoreAPI) -> None:
        """Namespaces are sorted and distinct; prefix/suffix take '*'; max_depth truncates."""
        for ns in [("b", "x", "1"), ("a", "y"), ("a", "x", "1"), ("a", "x", "2"), ("a-z",)]:
            await api.put(ns, "k1", {})
            await api.put(ns, "k2", {})
        assert await api.list_namespaces() == [
            ("a", "x", "1"), ("a", "x", "2"), ("a", "y"), ("a-z",), ("b", "x", "1"),
        ]  # fmt: skip
        assert await api.list_namespaces(prefix=("a",)) == [
            ("a", "x", "1"),
            ("a", "x", "2"),
            ("a", "y"),
        ]
        assert await api.list_namespaces(prefix=("*", "x")) == [
            ("a", "x", "1"),
            ("a", "x", "2"),
            ("b", "x", "1"),
        ]
        assert await api.list_namespaces(suffix=("1",)) == [("a", "x", "1"), ("b", "x", "1")]
        assert await api.list_namespaces(suffix=("x", "*")) == [
            ("a", "x", "1"),
            ("a", "x", "2"),
            ("b", "x", "1"),
        ]
        assert await api.list_namespaces(prefix=("a",), suffix=("2",)) == [("a", "x", "2")]
        assert await api.list_namespaces(max_depth=2) == [
            ("a", "x"),
            ("a", "y"),
            ("a-z",),
            ("b", "x"),
        ]
        assert await api.list_namespaces(max_depth=1, limit=2, offset=1) == [("a-z",), ("b",)]
        assert await api.list_namespaces(prefix=("a", "x", "1", "deeper")) == []

    # --- batch -------------------------------------------------------------------------------
    async def test_batch_results_follow_ops_and_see_prior_state(self, api: StoreAPI) -> None:
        """Results come in op order; reads see the state before the batch; last put wins."""
        await api.put(("a",), "old", {"v": 0})
        results = await api.batch([
            PutOp(("a",), "new", {"v": 1}),
            GetOp(("a",), "new"),
            SearchOp(("a",)),
            PutOp(("a",), "new", {"v": 2}),
            ListNamespacesOp(),
            GetOp(("a",), "old"),
        ])  # fmt: skip
        assert results[0] is None and results[1] is None and results[3] is None
        assert [i.key for i in results[2]] == ["old"] and results[4] == [("a",)]
        assert results[5].value == {"v": 0}
        assert (await api.get(("a",), "new")).value == {"v": 2}

    # --- TTL ---------------------------------------------------------------------------------
    async def test_expired_items_are_invisible(self, api: StoreAPI) -> None:
        """After its TTL, an item is gone from get, search and list_namespaces."""
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

    async def test_sweep_ttl_deletes_expired_items(self, api: StoreAPI) -> None:
        """sweep_ttl deletes every expired item and returns how many."""
        clock = api.clock()
        await api.put(("t",), "a", {}, ttl=1)
        await api.put(("t",), "b", {}, ttl=1)
        await api.put(("t",), "c", {}, ttl=10)
        clock.advance(2)
        assert await api.sweep_ttl() == 2
        assert await api.sweep_ttl() == 0
        assert await api.keys(("t",)) == ["c"]

    @pytest.mark.parametrize("ttl", [0, -1, "5", True])
    async def test_invalid_ttl_raises(self, api: StoreAPI, ttl: Any) -> None:
        """ttl must be a positive number of minutes: anything else raises StoreError SG436."""
        with pytest.raises(StoreError) as info:
            await api.put(("t",), "k", {}, ttl=ttl)
        assert info.value.code == "SG436"

    # --- semantic search ---------------------------------------------------------------------
    @pytest.mark.parametrize("embedder", sorted(EMBEDDERS))
    async def test_query_ranks_by_cosine_similarity(self, open_api: Any, embedder: str) -> None:
        """With an index, a query ranks items by cosine similarity; scores are floats."""
        api = await self.semantic(open_api, EMBEDDERS[embedder])
        await fill(
            api, ("d",), {"mix": {"t": "cat dog"}, "dog": {"t": "dog"}, "cat": {"t": "cat cat"}}
        )
        found = await api.search(("d",), query="cat")
        assert [i.key for i in found] == ["cat", "mix", "dog"]
        assert [round(i.score, 4) for i in found] == [1.0, 0.7071, 0.0]

    async def test_unembedded_items_come_last_without_score(self, open_api: Any) -> None:
        """Items put with index=False follow the ranked ones, in order, with score None."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d",), "off", {"t": "cat"}, index=False)
        await api.put(("d",), "nofield", {"other": "cat"})
        await api.put(("d",), "on", {"t": "dog cat"})
        found = await api.search(("d",), query="cat")
        assert [(i.key, i.score is None) for i in found] == [
            ("on", False), ("off", True), ("nofield", True),
        ]  # fmt: skip
        assert [i.key for i in await api.search(("d",), query="cat", limit=1, offset=1)] == ["off"]

    async def test_fields_and_per_put_index(self, open_api: Any) -> None:
        """Only configured fields are embedded; put(index=[...]) overrides them per item."""
        api = await self.semantic(open_api, fields=["title"])
        await api.put(("d",), "a", {"title": "dog", "body": "cat cat cat"})
        await api.put(("d",), "b", {"title": "dog", "body": "cat"}, index=["body"])
        found = await api.search(("d",), query="cat")
        assert [(i.key, round(i.score, 4)) for i in found] == [("b", 1.0), ("a", 0.0)]

    async def test_array_paths_embed_each_element(self, open_api: Any) -> None:
        """A [*] path embeds each element; an item scores its best-matching element."""
        api = await self.semantic(open_api, fields=["notes[*].text", "meta.title"])
        await api.put(("d",), "a", {"notes": [{"text": "dog"}, {"text": "fish"}]})
        await api.put(("d",), "b", {"notes": [{"text": "cat dog"}], "meta": {"title": "fish"}})
        found = await api.search(("d",), query="fish")
        assert [(i.key, round(i.score, 4)) for i in found] == [("a", 1.0), ("b", 1.0)]
        found = await api.search(("d",), query="dog")
        assert [(i.key, round(i.score, 4)) for i in found] == [("a", 1.0), ("b", 0.7071)]

    async def test_query_with_filter_prefix_and_pages(self, open_api: Any) -> None:
        """Ranking applies after the namespace prefix and the filter, before limit/offset."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d", "x"), "1", {"t": "cat", "keep": True})
        await api.put(("d", "y"), "2", {"t": "cat dog", "keep": True})
        await api.put(("d", "x"), "3", {"t": "cat cat", "keep": False})
        await api.put(("e",), "4", {"t": "cat", "keep": True})
        found = await api.search(("d",), query="cat", filter={"keep": True})
        assert [i.key for i in found] == ["1", "2"]
        assert [i.key for i in await api.search(("d",), query="cat", limit=1, offset=1)] == ["3"]

    async def test_updates_reindex(self, open_api: Any) -> None:
        """Updating an item re-embeds it; an update with index=False drops its vectors."""
        api = await self.semantic(open_api, fields=["t"])
        await api.put(("d",), "a", {"t": "dog"})
        await api.put(("d",), "b", {"t": "cat dog"})
        await api.put(("d",), "a", {"t": "cat"})
        assert [i.key for i in await api.search(("d",), query="cat")] == ["a", "b"]
        await api.put(("d",), "a", {"t": "cat"}, index=False)
        found = await api.search(("d",), query="cat")
        assert [(i.key, i.score is None) for i in found] == [("b", False), ("a", True)]

    async def test_query_without_index_is_plain_search(self, api: StoreAPI) -> None:
        """Without an index a query is ignored: insertion order, score None."""
        await fill(api, ("d",), {"a": {"t": "dog"}, "b": {"t": "cat"}})
        found = await api.search(("d",), query="cat")
        assert [(i.key, i.score) for i in found] == [("a", None), ("b", None)]

    async def test_wrong_embedding_size_raises(self, open_api: Any) -> None:
        """Vectors whose length differs from index['dims'] raise StoreError SG433."""
        api = await open_api(index={"dims": 3, "embed": embed_texts})
        with pytest.raises(StoreError) as info:
            await api.put(("d",), "a", {"t": "cat"})
        assert info.value.code == "SG433"
        assert await api.get(("d",), "a") is None

    async def test_created_at_is_utc(self, api: StoreAPI) -> None:
        """Timestamps are timezone-aware UTC datetimes near the store's clock."""
        clock = api.clock()
        await api.put(("a",), "k", {})
        item = await api.get(("a",), "k")
        assert item.created_at == datetime.fromtimestamp(clock.now, UTC)
