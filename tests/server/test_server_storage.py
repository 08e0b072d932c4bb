"""The server's document storage (``server/storage``) on SQLite and PostgreSQL.

* Containment (search ``metadata``/``values`` filters) and access filters (what an auth
  handler returns) compiled to SQL give exactly the answers of a plain-Python reference,
  for random documents and filters (hypothesis), on both databases.
* Sorting, paging and counting in SQL keep the order searches always had.
* A search decodes only what it returns: a huge stored value is never decoded by a search
  that does not return it or filter on it, nor by a count (checked by instrumenting the
  decoder, not by timing).
* A database written by an earlier version (one ``sg_server_docs`` table) is migrated.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from serve_harness import pg_schema_url, pg_unreachable

from stepgraph.server.resources.threads import Threads
from stepgraph.server.schemas.threads import ThreadCount, ThreadCreate, ThreadSearch
from stepgraph.server.storage import open_backend, records
from stepgraph.server.storage.filters import AllOf, AnyOf, DocQuery, MetaContains, MetaEq

# --- a plain-Python reference -----------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """JSON scalar equality: booleans are not numbers, 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b)


def contains(value: Any, pattern: Any) -> bool:
    """PostgreSQL's ``@>`` on JSON values."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(k in value and contains(value[k], v) for k, v in pattern.items())
    if isinstance(pattern, list):
        return isinstance(value, list) and all(any(contains(v, p) for v in value) for p in pattern)
    if isinstance(value, (dict, list)):
        return False
    return same(value, pattern)


def passes(meta: dict[str, Any], flt: Any) -> bool:
    """What an access filter means, on a metadata dict."""
    if isinstance(flt, MetaEq):
        if flt.key not in meta:
            return False
        got = meta[flt.key]
        if isinstance(flt.value, tuple):
            return isinstance(got, list) and len(got) == len(flt.value) and all(
                not isinstance(g, (dict, list)) and same(g, w) for g, w in zip(got, flt.value, strict=True))
        return not isinstance(got, (dict, list)) and same(got, flt.value)
    if isinstance(flt, MetaContains):
        got = meta.get(flt.key)
        return isinstance(got, list) and all(any(not isinstance(g, (dict, list)) and same(g, w) for g in got)
                                             for w in flt.items)
    if isinstance(flt, AllOf):
        return all(passes(meta, p) for p in flt.parts)
    return any(passes(meta, p) for p in flt.parts)


# --- backends ---------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "postgres":
        reason = pg_unreachable()
        if reason:
            pytest.skip(reason)
        with pg_schema_url() as url:
            async with open_backend(url, tmp_path / "unused.sqlite") as b:
                yield b
    else:
        async with open_backend(None, tmp_path / "db.sqlite") as b:
            yield b


KEYS = st.sampled_from(["a", "b", "owner", "tags", "k.1", 'q"t', "ü", "$x"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.0]),
                    st.sampled_from(["", "x", "y", "alice", "1", "true", "null", "a\u0000b"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=4)


def _sub_pattern(value: Any, draw: Any) -> Any:
    """A pattern the value contains (so that positive cases are common)."""
    if isinstance(value, dict):
        keys = draw(st.lists(st.sampled_from(sorted(value)), unique=True, max_size=len(value))) if value else []
        return {k: _sub_pattern(value[k], draw) for k in keys}
    if isinstance(value, list):
        items = draw(st.lists(st.sampled_from(value), max_size=2)) if value else []
        return [_sub_pattern(v, draw) for v in items]
    return value


@st.composite
def docs_and_pattern(draw: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    docs = draw(st.lists(OBJECTS, min_size=1, max_size=6))
    if draw(st.booleans()):
        pattern = _sub_pattern(draw(st.sampled_from(docs)), draw)
    else:
        pattern = draw(OBJECTS)
    return docs, pattern


ACCESS_VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3).map(tuple))


def access_filters(depth: int = 0) -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.builds(MetaEq, KEYS, ACCESS_VALUES),
                     st.builds(MetaContains, KEYS, st.lists(SCALARS, min_size=1, max_size=2).map(tuple)))
    if depth >= 2:
        return leaf
    sub = access_filters(depth + 1)
    return st.one_of(leaf, st.builds(AllOf, st.lists(sub, min_size=2, max_size=3).map(tuple)),
                     st.builds(AnyOf, st.lists(sub, min_size=2, max_size=3).map(tuple)))


def nul_under_odd_key(obj: Any, odd: bool = False) -> bool:
    """A string with NUL under a key SQLite paths cannot spell: SQLite's ``json_each`` stops
    such strings at the NUL (a documented limit of the SQLite backend)."""
    if isinstance(obj, dict):
        return any(nul_under_odd_key(v, odd or '"' in k or "\\" in k) for k, v in obj.items())
    if isinstance(obj, list):
        return any(nul_under_odd_key(v, odd) for v in obj)
    return odd and isinstance(obj, str) and "\x00" in obj


async def _load(backend: Any, metas: list[dict[str, Any]], *, values: bool = False) -> tuple[str, list[str]]:
    kind = f"t{uuid.uuid4().hex[:8]}"
    ids = []
    for i, meta in enumerate(metas):
        doc_id = f"d{i}"
        doc = {"thread_id": doc_id, "created_at": f"2024-01-01T00:00:0{i}+00:00", "metadata": meta}
        if values:
            doc = {**doc, "metadata": {}, "values": meta}
        await backend.docs.insert(kind, doc_id, doc)
        ids.append(doc_id)
    return kind, ids


async def _found(backend: Any, kind: str, q: DocQuery) -> set[str]:
    got = {d["thread_id"] for d in await backend.docs.query(kind, q)}
    assert await backend.docs.count(kind, q) == len(got)
    return got


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=docs_and_pattern())
async def test_metadata_containment_matches_the_reference(backend: Any, case: Any) -> None:
    metas, pattern = case
    if backend.name == "sqlite":
        assume(not nul_under_odd_key(pattern))
    kind, ids = await _load(backend, metas)
    want = {i for i, m in zip(ids, metas, strict=True) if contains(m, pattern)}
    assert await _found(backend, kind, DocQuery(metadata=pattern)) == (want if pattern else set(ids))


@SETTINGS
@given(case=docs_and_pattern())
async def test_values_containment_matches_the_reference(backend: Any, case: Any) -> None:
    metas, pattern = case
    if backend.name == "sqlite":
        assume(not nul_under_odd_key(pattern))
    kind, ids = await _load(backend, metas, values=True)
    want = {i for i, m in zip(ids, metas, strict=True) if contains(m, pattern)}
    assert await _found(backend, kind, DocQuery(values=pattern)) == (want if pattern else set(ids))


@SETTINGS
@given(metas=st.lists(OBJECTS, min_size=1, max_size=6), flt=access_filters())
async def test_access_filters_match_the_reference(backend: Any, metas: list[dict[str, Any]], flt: Any) -> None:
    kind, ids = await _load(backend, metas)
    want = {i for i, m in zip(ids, metas, strict=True) if passes(m, flt)}
    assert await _found(backend, kind, DocQuery(access=flt)) == want
    for i, meta in zip(ids, metas, strict=True):  # single reads apply it too
        assert (await backend.docs.get(kind, i, access=flt) is not None) == passes(meta, flt)


async def test_sorting_paging_and_ties(backend: Any) -> None:
    kind = "thread"
    stamps = ["2024-01-01T00:00:01+00:00", "2024-01-01T00:00:01.5+00:00", None, "2024-01-01T00:00:01+00:00",
              "2023-12-31T23:59:59+00:00"]
    for i, ts in enumerate(stamps):
        doc = {"thread_id": f"t{i}", "metadata": {}, "status": "idle" if i % 2 else "busy"}
        if ts is not None:
            doc["created_at"] = doc["updated_at"] = ts
        await backend.docs.insert(kind, f"t{i}", doc)

    def reference(descending: bool) -> list[str]:
        docs = [(f"t{i}", ts) for i, ts in enumerate(stamps)]
        docs.sort(key=lambda d: (d[1] is None, d[1] or "", d[0]), reverse=descending)
        return [d[0] for d in docs]

    for descending in (True, False):
        q = DocQuery(sort_by="created_at", descending=descending)
        assert [d["thread_id"] for d in await backend.docs.query(kind, q)] == reference(descending)
        page = await backend.docs.query(kind, replace(q, limit=2, offset=1))
        assert [d["thread_id"] for d in page] == reference(descending)[1:3]
    by_id = await backend.docs.query(kind, DocQuery(sort_by="thread_id", descending=False))
    assert [d["thread_id"] for d in by_id] == sorted(f"t{i}" for i in range(5))
    assert await backend.docs.count(kind, DocQuery(status="busy")) == 3
    assert await backend.docs.count(kind, DocQuery(ids=("t1", "t2", "zz"))) == 2
    assert await backend.docs.count(kind, DocQuery(ids=())) == 0


async def test_nul_and_odd_keys_round_trip(backend: Any) -> None:
    meta = {"k": "v\u0000", "k\u0000": "v", 'q"t': {"a.b": [1, "\u0000"]}}
    await backend.docs.insert("thread", "x", {"thread_id": "x", "metadata": meta, "values": {"s": "\u0000"}})
    assert (await backend.docs.get("thread", "x"))["metadata"] == meta
    assert await backend.docs.count("thread", DocQuery(metadata={'q"t': {"a.b": ["\u0000"]}})) == 1
    assert await backend.docs.count("thread", DocQuery(values={"s": "\u0000"})) == 1
    assert await backend.docs.count("thread", DocQuery(access=MetaEq("k", "v\u0000"))) == 1
    assert await backend.docs.count("thread", DocQuery(access=MetaEq("k", "v"))) == 0
    if backend.name == "postgres":  # SQLite's json_each reads a key only up to a NUL
        assert await backend.docs.count("thread", DocQuery(access=MetaEq("k\u0000", "v"))) == 1


# --- decoding only what is returned -----------------------------------------------------------
class Decodes:
    """Records the size of every JSON text the storage layer decodes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        real = records.loads

        def spy(text: str | bytes) -> Any:
            self.sizes.append(len(text))
            return real(text)

        monkeypatch.setattr(records, "loads", spy)

    def biggest(self) -> int:
        return max(self.sizes, default=0)


HUGE = 3_000_000


async def test_search_never_decodes_a_huge_value_it_does_not_return(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    threads = Threads(backend.docs)
    big = await threads.create(ThreadCreate(metadata={"kind": "big"}))
    await threads.update(big["thread_id"], values={"blob": "x" * HUGE}, interrupts={"t": [{"value": "y" * HUGE}]})
    for i in range(5):
        small = await threads.create(ThreadCreate(metadata={"kind": "small", "i": i}))
        await threads.update(small["thread_id"], values={"n": i})
    spy = Decodes(monkeypatch)

    items, total, *_ = await threads.search(ThreadSearch(metadata={"kind": "small"}, limit=10))
    assert total == 5 and len(items) == 5 and spy.biggest() < 1000
    items, total, *_ = await threads.search(ThreadSearch(select=["thread_id", "metadata", "status"], limit=100))
    assert total == 6 and spy.biggest() < 1000
    items, total, *_ = await threads.search(ThreadSearch(sort_by="created_at", sort_order="asc", offset=1))
    assert total == 6 and big["thread_id"] not in {t["thread_id"] for t in items} and spy.biggest() < 1000
    assert await threads.count(ThreadCount()) == 6
    assert await threads.count(ThreadCount(metadata={"kind": "big"})) == 1
    assert await threads.count(ThreadCount(values={"n": 3})) == 1  # filtering on values happens in SQL
    assert spy.biggest() < 1000
    before = len(spy.sizes)
    assert await threads.count(ThreadCount(status="idle")) == 6 and len(spy.sizes) == before  # a count decodes nothing

    items, *_ = await threads.search(ThreadSearch(metadata={"kind": "big"}))  # returned: decoded (once)
    assert items[0]["values"]["blob"] == "x" * HUGE
    assert sum(s >= HUGE for s in spy.sizes) == 2  # values and interrupts


def test_search_sort_fields_are_storage_columns() -> None:
    """Every ``sort_by`` the typed search models accept is a column the storage sorts by."""
    from typing import get_args

    from stepgraph.server.schemas.assistants import AssistantSortBy
    from stepgraph.server.schemas.threads import ThreadSortBy

    for literal in (ThreadSortBy, AssistantSortBy):
        assert set(get_args(literal)) <= set(records.SORT_COLUMNS)


def test_server_search_does_not_decode_a_huge_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    from server_harness import start_server

    srv = start_server(tmp_path / "db.sqlite")
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            tid = http.post("/threads", json={"metadata": {"big": True}}).json()["thread_id"]
            http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "simple", "input": {"value": "x" * HUGE}})
            for _ in range(3):
                http.post("/threads", json={})
            spy = Decodes(monkeypatch)
            res = http.post("/threads/search", json={"metadata": {"big": None}, "limit": 10})
            assert res.status_code == 200 and res.json() == []
            res = http.post("/threads/search", json={"select": ["thread_id", "status"], "limit": 10})
            assert len(res.json()) == 4 and res.headers["x-pagination-total"] == "4"
            assert http.post("/threads/count", json={}).json() == 4
            assert spy.biggest() < 10_000, spy.sizes
    finally:
        srv.stop()


# --- migration of the earlier one-table layout ------------------------------------------------
LEGACY = [
    ("assistant", "a1", None, {"assistant_id": "a1", "graph_id": "g", "name": "Zed", "metadata": {"o": 1},
                               "created_at": "2024-01-02T00:00:00+00:00", "config": {}}),
    ("thread", "t1", None, {"thread_id": "t1", "metadata": {"owner": "alice"}, "status": "idle",
                            "created_at": "2024-01-01T00:00:00+00:00", "values": {"v": 1}, "interrupts": {}}),
    ("run", "r1", "t1", {"run_id": "r1", "thread_id": "t1", "status": "success", "metadata": {},
                         "created_at": "2024-01-01T00:00:01+00:00", "kwargs": {"input": {"v": 1}}}),
]
_LEGACY_DDL = ("CREATE TABLE sg_server_docs (kind TEXT NOT NULL, id TEXT NOT NULL, thread_id TEXT, "
               "doc TEXT NOT NULL, PRIMARY KEY (kind, id))")


async def _check_migrated(b: Any) -> None:
    assert (await b.docs.get("run", "r1"))["kwargs"] == {"input": {"v": 1}}
    assert [d["run_id"] for d in await b.docs.list("run", thread_id="t1")] == ["r1"]
    assert await b.docs.count("thread", DocQuery(access=MetaEq("owner", "alice"), values={"v": 1})) == 1
    assert (await b.docs.query("assistant", DocQuery(name_contains="ze")))[0]["assistant_id"] == "a1"


async def test_sqlite_legacy_table_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(_LEGACY_DDL)
        conn.executemany("INSERT INTO sg_server_docs VALUES (?, ?, ?, ?)",
                         [(k, i, t, json.dumps(d)) for k, i, t, d in LEGACY])
    async with open_backend(str(path), path) as b:
        await _check_migrated(b)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sg_server_docs'").fetchone() == (0,)
    async with open_backend(str(path), path) as b:  # a second start finds nothing to migrate
        await _check_migrated(b)


@pytest.mark.postgres
async def test_postgres_legacy_table_is_migrated(tmp_path: Path) -> None:
    reason = pg_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    with pg_schema_url() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(_LEGACY_DDL)
            for k, i, t, d in LEGACY:
                conn.execute("INSERT INTO sg_server_docs VALUES (%s, %s, %s, %s)", (k, i, t, json.dumps(d)))
        async with open_backend(url, tmp_path / "x") as b:
            await _check_migrated(b)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('sg_server_docs')").fetchone() == (None,)
        async with open_backend(url, tmp_path / "x") as b:
            await _check_migrated(b)


async def test_deep_and_wide_filters_answer_or_refuse_cleanly(backend: Any) -> None:
    from stepgraph.server.errors import ApiError

    await backend.docs.insert("thread", "x", {"thread_id": "x", "metadata": {"a": [[[[1]]]]}})
    deep: Any = 1
    for _ in range(60):
        deep = {"a": deep}
    assert await backend.docs.count("thread", DocQuery(metadata=deep)) == 0
    assert await backend.docs.count("thread", DocQuery(metadata={"a": [[[[1]]]]})) == 1
    wide = {f"k{i}": [{"x": [[i, {"y": i}]]}] for i in range(120)}  # ~960 values, lists 3 deep
    assert await backend.docs.count("thread", DocQuery(metadata=wide, values=wide)) == 0
    for bad in ({"a": [[[[[1]]]]]}, {f"k{i}": i for i in range(1001)}, {"a": deep, "b": {"c": {"d": {"e": {"f": {"g": deep}}}}}}):
        with pytest.raises(ApiError) as info:
            await backend.docs.count("thread", DocQuery(metadata=bad))
        assert info.value.status == 422
