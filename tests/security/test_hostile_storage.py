"""Attacks on the savers' own row format, planted with raw SQL (or into the memory saver).

Deflate bombs and repeated references in the content-addressed pieces, delta chains and diff
chains that loop, and packed checkpoint rows with impossible contents. Each read comes from
a saver opened afresh on the same storage (a new process: nothing is served from the writer's
memory), must end with a coded error, and must not hang or blow up memory. Legitimate large
and repetitive values keep loading.
"""

from __future__ import annotations

import operator
import tracemalloc
import uuid
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypedDict

import ormsgpack
import pytest

from stepgraph.checkpoint._pieces import REF_CODE
from stepgraph.checkpoint.base import SaverError
from stepgraph.checkpoint.serde import SerializationError
from stepgraph.graph import START, StateGraph


class State(TypedDict):
    messages: Annotated[list, operator.add]
    note: str


def _node(state: State) -> dict[str, Any]:
    return {"messages": [f"reply {len(state['messages'])} " + "x" * 80], "note": "done"}


def graph_on(saver: Any) -> Any:
    return StateGraph(State).add_node("n", _node).add_edge(START, "n").compile(checkpointer=saver)


@asynccontextmanager
async def fresh_saver(storage: Any) -> AsyncIterator[Any]:
    """A new saver on ``storage``'s database (empty caches, as in a new process)."""
    kind = storage.kind
    if kind == "memory":
        yield storage.saver
    elif kind.startswith("sqlite"):
        from stepgraph.checkpoint.sqlite import SqliteSaver

        path = storage.raw.execute("PRAGMA database_list").fetchone()[2]
        with SqliteSaver.from_conn_string(path) as saver:
            yield saver
    else:
        from stepgraph.checkpoint.postgres import PostgresSaver

        dsn = storage.raw.info.dsn
        with PostgresSaver.from_conn_string(dsn) as saver:
            yield saver


async def seed(storage: Any, messages: list[Any] | None = None) -> tuple[dict[str, Any], str]:
    """Run the graph on a fresh thread; returns its config and stored thread id."""
    graph = graph_on(storage.saver)
    config = {"configurable": {"thread_id": f"t{uuid.uuid4().hex[:8]}"}}
    start = {"messages": messages if messages is not None else ["hello " + "y" * 80], "note": "a"}
    if storage.is_async:
        await graph.ainvoke(start, config)
    else:
        graph.invoke(start, config)
    tid = config["configurable"]["thread_id"]
    return config, storage.stored_thread(tid) if storage.sql else tid


def read_code(saver: Any, config: dict[str, Any], watch: Any) -> str:
    """The code a fresh read of the thread raises (``"LOADED"`` if it loads), each read path
    in turn under the audit watch; all must agree."""
    graph = graph_on(saver)
    codes = set()
    for read in (lambda: saver.get_tuple(config), lambda: list(saver.list(config)),
                 lambda: graph.get_state(config)):
        with watch.reading():
            try:
                read()
                codes.add("LOADED")
            except (SerializationError, SaverError) as exc:
                codes.add(exc.code)
    assert len(codes) == 1, codes
    return codes.pop()


def ref(digest: bytes) -> bytes:
    return bytes((0xC7, len(digest), REF_CODE)) + digest


@pytest.fixture
def storage_sql(storage: Any) -> Any:
    if not storage.sql:
        pytest.skip("an attack on the SQL savers' row format")
    return storage


async def test_deflate_bomb_piece_is_refused(storage_sql: Any, watch: Any) -> None:
    """A stored piece that inflates 1000:1 (50 MiB from 50 KiB) is refused with SG406."""
    storage = storage_sql
    config, tid = await seed(storage)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = b"\x01" + deflate.compress(b"\xc0" * (50 << 20)) + deflate.flush()
    digest = b"B" * 12
    storage.execute("INSERT INTO sg_checkpoint_pieces (thread_id, digest, data) VALUES (?, ?, ?)",
                    (tid, digest, bomb))
    storage.execute("UPDATE sg_checkpoint_blobs SET type = 'p', blob = ?, base_version = NULL "
                    "WHERE thread_id = ? AND channel = 'messages'", (b"\x91" + ref(digest), tid))
    async with fresh_saver(storage) as saver:
        tracemalloc.start()
        code = read_code(saver, config, watch)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert code == "SG406"
    assert peak < 16 << 20, peak  # about 64 x 50 KiB were inflated before the refusal


async def test_repeated_references_to_a_large_piece_are_refused(storage_sql: Any, watch: Any) -> None:
    """20 000 references (300 KB) to one 1 MB piece would join into 20 GB: SG406."""
    storage = storage_sql
    config, tid = await seed(storage)
    big = ormsgpack.packb("z" * (1 << 20))
    digest = b"R" * 12
    storage.execute("INSERT INTO sg_checkpoint_pieces (thread_id, digest, data) VALUES (?, ?, ?)",
                    (tid, digest, b"\x00" + big))
    n = 20_000
    skeleton = b"\xdd" + n.to_bytes(4, "big") + ref(digest) * n
    storage.execute("UPDATE sg_checkpoint_blobs SET type = 'p', blob = ?, base_version = NULL "
                    "WHERE thread_id = ? AND channel = 'messages'", (skeleton, tid))
    async with fresh_saver(storage) as saver:
        assert read_code(saver, config, watch) == "SG406"


async def test_delta_chain_that_loops_is_refused(storage: Any, watch: Any) -> None:
    """A list delta whose base is itself (or a later version) is SG414, not an endless loop."""
    config, tid = await seed(storage)
    if storage.sql:
        versions = [r[0] for r in storage.execute(
            "SELECT version FROM sg_checkpoint_blobs WHERE thread_id = ? AND channel = 'messages' "
            "ORDER BY version", (tid,))]
        assert len(versions) >= 2
        storage.execute("UPDATE sg_checkpoint_blobs SET base_version = ? WHERE thread_id = ? "
                        "AND channel = 'messages' AND version = ?", (versions[-1], tid, versions[0]))
    else:
        keys = sorted(k for k in storage.saver.blobs if k[0] == tid and k[2] == "messages")
        typ, data, _ = storage.saver.blobs[keys[0]]
        storage.saver.blobs[keys[0]] = (typ, data, keys[-1][3])
    async with fresh_saver(storage) as saver:
        assert read_code(saver, config, watch) == "SG414"


async def test_diff_chain_that_loops_is_refused(storage_sql: Any, watch: Any) -> None:
    """Checkpoint rows stored as diffs whose parents loop: the chain query stops and the
    read raises SG414 (it used to recurse forever in SQL)."""
    storage = storage_sql
    config, tid = await seed(storage)
    rows = storage.execute("SELECT checkpoint_id, kind FROM sg_checkpoints WHERE thread_id = ? "
                           "ORDER BY checkpoint_id", (tid,))
    assert len(rows) >= 2 and rows[-1][1] == 1
    storage.execute("UPDATE sg_checkpoints SET kind = 1, parent_checkpoint_id = ? "
                    "WHERE thread_id = ? AND checkpoint_id = ?", (rows[-1][0], tid, rows[0][0]))
    async with fresh_saver(storage) as saver:
        assert read_code(saver, config, watch) == "SG414"


@pytest.mark.parametrize(
    "packed",
    [
        {"v": 4, "cv": {"not-an-index": 1}, "n": []},
        {"v": 4, "cv": {7: 1}, "n": ["a"]},
        {"v": 4, "ts": (1 << 62), "cv": {}, "n": []},
        {"v": 4, "cv": {0: 1}, "n": ["a"], "um": 7},
        {"v": 4, "cv": {}, "n": [], "iv": {0: "x"}},
        [1, 2, 3],
    ],
    ids=["str-index", "index-out-of-range", "timestamp-overflow", "mask-not-bytes",
         "inline-without-name", "not-a-map"],
)
async def test_impossible_packed_rows_are_sg403(storage_sql: Any, watch: Any, packed: Any) -> None:
    """A packed checkpoint row with impossible contents is a coded SG403, never a bare
    KeyError/OverflowError (a 500 on the server)."""
    storage = storage_sql
    config, tid = await seed(storage)
    data = ormsgpack.packb(packed, option=ormsgpack.OPT_NON_STR_KEYS)
    storage.execute("UPDATE sg_checkpoints SET type = '', checkpoint = ?, kind = 0 "
                    "WHERE thread_id = ?", (data, tid))
    async with fresh_saver(storage) as saver:
        assert read_code(saver, config, watch) == "SG403"


async def test_legitimate_repetitive_values_still_load(storage_sql: Any) -> None:
    """Limits refuse nothing stepgraph writes: one large message repeated 40 times, and a
    1 MB message of one repeated character (stored raw: it would deflate beyond 64:1)."""
    storage = storage_sql
    big = "q" * 200_000
    values = [big] * 40 + ["=" * (1 << 20)] + [f"m{i} " + "w" * 100 for i in range(500)]
    config, _ = await seed(storage, values)
    async with fresh_saver(storage) as saver:
        state = graph_on(saver).get_state(config)
    assert state.values["messages"][:-1] == values


async def test_a_long_chat_loads_through_a_fresh_saver(storage_sql: Any) -> None:
    """A 10 000-message chat (pieces, deltas, diff rows) loads in a new process (the async
    savers share this decode path; 100 000 messages are measured in test_hostile_serde)."""
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage

    storage = storage_sql
    if storage.is_async:
        pytest.skip("same decode path as the sync saver")
    history = []
    for i in range(5_000):
        history.append(HumanMessage(f"question {i} " + "lorem " * 8, id=f"h{i}"))
        history.append(AIMessage(f"answer {i} " + "ipsum " * 12, id=f"a{i}"))
    config, _ = await seed(storage, history)
    async with fresh_saver(storage) as saver:
        state = graph_on(saver).get_state(config)
    assert state.values["messages"][:-1] == history
