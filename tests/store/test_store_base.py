"""The store data model, BaseStore's convenience methods and the embedding helpers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest

from stepgraph.errors import StepgraphError
from stepgraph.store._embed import Embedder, Index, get_text_at_path, pack, tokenize_path, unpack
from stepgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    StoreError,
)
from stepgraph.store.memory import InMemoryStore

T0 = datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


class RecordingStore(BaseStore):
    """A third-party store without TTL support that records the ops it receives."""

    def __init__(self, ttl: dict | None = None) -> None:
        self.ops: list[Op] = []
        self.ttl_config = ttl  # type: ignore[assignment]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        self.ops.extend(ops)
        return [None] * len(self.ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


def test_item_fields_equality_and_dict() -> None:
    """Item parses ISO strings, compares by fields, hashes by (namespace, key)."""
    item = Item(
        value={"a": 1}, key="k", namespace=["n", "m"], created_at=T0.isoformat(), updated_at=T0
    )
    assert item.namespace == ("n", "m") and item.created_at == T0
    twin = Item(value={"a": 1}, key="k", namespace=("n", "m"), created_at=T0, updated_at=T0)
    assert item == twin and hash(item) == hash(twin) and item != "k"
    assert item.dict() == {
        "namespace": ["n", "m"], "key": "k", "value": {"a": 1},
        "created_at": T0.isoformat(), "updated_at": T0.isoformat(),
    }  # fmt: skip
    assert repr(item).startswith("Item(namespace=['n', 'm'], key='k'")


def test_search_item_adds_score() -> None:
    """SearchItem takes positional fields plus score and shows it in dict() and repr."""
    found = SearchItem(("n",), "k", {"a": 1}, T0, T0, 0.5)
    assert found.score == 0.5 and found.dict()["score"] == 0.5
    assert "score=0.5" in repr(found) and SearchItem(("n",), "k", {}, T0, T0).score is None


def test_not_provided_is_falsy_sentinel() -> None:
    """NOT_PROVIDED is falsy and prints like LangGraph's sentinel."""
    assert not NOT_PROVIDED and repr(NOT_PROVIDED) == "NOT_GIVEN"


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        ((), "Namespace cannot be empty."),
        (("a.b",), "cannot contain periods"),
        (("",), "cannot be empty strings"),
        ((3,), "must be strings, but got int"),
        (("a\x00",), "NUL"),
        (("langgraph", "x"), 'Root label for namespace cannot be "langgraph"'),
    ],
)
def test_put_validation_messages(namespace: tuple, message: str) -> None:
    """put raises InvalidNamespaceError with LangGraph's wording, code SG431 and a hint."""
    with pytest.raises(InvalidNamespaceError, match=message) as info:
        RecordingStore().put(namespace, "k", {})
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, StepgraphError)
    assert err.code == "SG431" and err.hint and "[SG431]" in str(err)


def test_convenience_methods_build_ops() -> None:
    """get/search/put/delete/list_namespaces send the ops LangGraph's BaseStore sends."""
    store = RecordingStore(ttl={"default_ttl": 5.0, "refresh_on_read": False})
    store.get(("a",), 1)
    store.search(("a",), query="q", filter={"x": 1}, limit=3, offset=2, refresh_ttl=True)
    store.put(("a",), 2, {"v": 1}, index=["v"], ttl=None)
    store.delete(("a",), 3)
    store.list_namespaces(prefix=("a", "*"), suffix=("z",), max_depth=2, limit=5, offset=1)
    assert store.ops == [
        GetOp(("a",), "1", False),
        SearchOp(("a",), {"x": 1}, 3, 2, "q", True),
        PutOp(("a",), "2", {"v": 1}, ["v"], None),
        PutOp(("a",), "3", None),
        ListNamespacesOp(
            (MatchCondition("prefix", ("a", "*")), MatchCondition("suffix", ("z",))), 2, 5, 1
        ),
    ]


def test_ttl_needs_store_support() -> None:
    """A store without supports_ttl rejects an explicit ttl; the config default passes."""
    store = RecordingStore(ttl={"default_ttl": 5.0})
    with pytest.raises(NotImplementedError, match="TTL is not supported by RecordingStore"):
        store.put(("a",), "k", {}, ttl=1)
    store.put(("a",), "k", {})
    assert store.ops[-1].ttl == 5.0


async def test_async_twins_build_the_same_ops() -> None:
    """The a* methods send the same ops as their sync twins."""
    store = RecordingStore()
    await store.aget(("a",), "k")
    await store.aput(("a",), "k", {"v": 1})
    await store.adelete(("a",), "k")
    await store.asearch(("a",))
    await store.alist_namespaces()
    assert store.ops == [
        GetOp(("a",), "k", True), PutOp(("a",), "k", {"v": 1}), PutOp(("a",), "k", None),
        SearchOp(("a",)), ListNamespacesOp((), None, 100, 0),
    ]  # fmt: skip


def test_unknown_op_raises() -> None:
    """batch rejects an object that is not a store op with StoreError SG430."""
    with pytest.raises(StoreError) as info:
        InMemoryStore().batch([("not", "an", "op")])  # type: ignore[list-item]
    assert info.value.code == "SG430"


# --- embedding helpers ------------------------------------------------------------------------
def test_tokenize_and_extract_paths() -> None:
    """Paths support dots, [i], [-i], [*] and *; missing parts yield nothing."""
    doc = {"a": {"b": [{"c": "x"}, {"c": 2}, {"d": None}]}, "t": ["p", "q"], "n": None}
    assert tokenize_path("a.b[0].c") == ["a", "b", "[0]", "c"]
    assert get_text_at_path(doc, "a.b[*].c") == ["x", "2"]
    assert get_text_at_path(doc, "t[-1]") == ["q"]
    assert get_text_at_path(doc, "t[5]") == [] and get_text_at_path(doc, "n") == []
    assert get_text_at_path(doc, "a.b[2]") == ['{"d": null}']
    assert get_text_at_path({"x": "1", "y": "2"}, "*") == ["1", "2"]
    assert get_text_at_path({"b": 1, "a": "é"}, "$") == ['{"a": "é", "b": 1}']


def test_vectors_round_trip_as_float32() -> None:
    """pack/unpack keep float32-representable vectors exactly."""
    assert unpack(pack([0.5, -2.0, 3.25])) == [0.5, -2.0, 3.25]


@pytest.mark.parametrize(
    "config",
    [
        {"embed": lambda texts: texts},
        {"dims": 2},
        {"dims": 2, "embed": 42},
        {"dims": 2, "embed": "openai:x"},
    ],
)
def test_bad_index_config_raises(config: dict) -> None:
    """Missing dims/embed, a non-callable embed or a model name without langchain: SG433."""
    with pytest.raises(StoreError) as info:
        Index(config)  # type: ignore[arg-type]
    assert info.value.code == "SG433"


def test_embedding_count_mismatch_raises() -> None:
    """An embed function returning the wrong number of vectors raises SG433."""
    store = InMemoryStore(index={"dims": 1, "embed": lambda texts: [[1.0]]})
    with pytest.raises(StoreError, match="2 texts"):
        store.batch([PutOp(("a",), "1", {"t": "x"}), PutOp(("a",), "2", {"t": "y"})])


async def test_async_embed_from_sync_call_inside_a_loop() -> None:
    """A coroutine embed function also works from sync put/search on a running loop."""

    async def embed(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return [[float(len(t)), 1.0] for t in texts]

    store = InMemoryStore(index={"dims": 2, "embed": embed, "fields": ["t"]})
    store.put(("a",), "k", {"t": "abc"})
    assert store.search(("a",), query="xyz")[0].score == pytest.approx(1.0)


async def test_embeddings_object_prefers_async_methods() -> None:
    """An Embeddings-like object's aembed_* methods are used by the async API."""
    calls: list[str] = []

    class Emb:
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append("sync")
            return [[1.0] for _ in texts]

        async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append("async")
            return [[1.0] for _ in texts]

    embedder = Embedder(Emb())
    assert await embedder.adocuments(["a"]) == [[1.0]] and await embedder.aquery("q") == [1.0]
    assert embedder.query("q") == [1.0]
    assert calls == ["async", "async", "sync"]


def test_item_value_types_survive_memory_copies() -> None:
    """The in-memory store copies nested values but keeps non-JSON leaves intact."""
    store = InMemoryStore()
    when = datetime(2024, 1, 1, tzinfo=UTC)
    store.put(("a",), "k", {"when": when, "pair": (1, 2)})
    value: Any = store.get(("a",), "k").value  # type: ignore[union-attr]
    assert value == {"when": when, "pair": (1, 2)}


def test_stored_item_dict_is_json_ready() -> None:
    """A stored item's dict() is JSON-ready; the SearchItem of it equals the Item."""
    store = InMemoryStore()
    store.put(("a", "b"), "k", {"v": 1})
    item = store.get(("a", "b"), "k")
    data = json.loads(json.dumps(item.dict()))  # type: ignore[union-attr]
    assert data["namespace"] == ["a", "b"] and data["key"] == "k"
    assert datetime.fromisoformat(data["created_at"]) == item.created_at  # type: ignore[union-attr]
    found = store.search(("a",))[0]
    assert found.dict()["score"] is None and found == item
