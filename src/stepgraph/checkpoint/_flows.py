"""Saver operations as sans-IO generators, shared by the sync and async SQL savers.

A flow yields ``Op``s (one SQL statement each) and receives the fetched rows back; it never
touches a connection. ``drive`` and ``adrive`` are the only sync/async twins: each saver runs
a whole flow inside one transaction of its database, so ``put`` (checkpoint row + all of its
blobs) and ``put_writes`` are atomic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter
from typing import Any, Literal, NamedTuple, TypeVar

from stepgraph.checkpoint._codec import ListQuery, WriteRow
from stepgraph.checkpoint._compact import (
    CompactCodec,
    CompactPlan,
    CompactRow,
    Decoded,
    WritesPlan,
)
from stepgraph.checkpoint._ids import stored_id
from stepgraph.checkpoint._sql import THREAD_KEY_AFTER, Dialect, SqlSchema
from stepgraph.checkpoint._stored_forms import loaded_type
from stepgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointTuple,
    RunnableConfig,
    thread_target,
)

__all__ = ["Op", "adrive", "aexecute", "drive", "execute"]

R = TypeVar("R")


class Op(NamedTuple):
    """One statement: ``fetch`` returns its rows, ``exec`` nothing, ``many`` is executemany."""

    sql: str
    params: Any = ()
    kind: Literal["fetch", "exec", "many"] = "fetch"


Flow = Generator[Op, Any, R]


def drive(flow: Flow[R], run: Callable[[Op], Any]) -> R:
    """Run ``flow`` with a blocking ``run(op) -> rows``."""
    try:
        op = next(flow)
        while True:
            op = flow.send(run(op))
    except StopIteration as done:
        return done.value


async def adrive(flow: Flow[R], run: Callable[[Op], Awaitable[Any]]) -> R:
    """Run ``flow`` with an async ``run(op) -> rows``."""
    try:
        op = next(flow)
        while True:
            op = flow.send(await run(op))
    except StopIteration as done:
        return done.value


def execute(cursor: Any, op: Op) -> list[tuple[Any, ...]] | None:
    """Run ``op`` on a DB-API cursor (sqlite3 or psycopg)."""
    if op.kind == "many":
        cursor.executemany(op.sql, op.params)
        return None
    cursor.execute(op.sql, op.params)
    return cursor.fetchall() if op.kind == "fetch" else None


async def aexecute(cursor: Any, op: Op) -> list[tuple[Any, ...]] | None:
    """Run ``op`` on an async cursor (psycopg ``AsyncCursor``)."""
    if op.kind == "many":
        await cursor.executemany(op.sql, op.params)
        return None
    await cursor.execute(op.sql, op.params)
    return await cursor.fetchall() if op.kind == "fetch" else None


# --- flows -------------------------------------------------------------------------------
def migrate(d: SqlSchema) -> Flow[int]:
    """Apply the migrations not yet recorded; returns the schema version."""
    if d.lock_sql:  # before any DDL: concurrent CREATE ... IF NOT EXISTS can still collide
        yield Op(d.lock_sql)
    yield Op(d.create_migrations, kind="exec")
    done = {row[0] for row in (yield Op(d.select_migrations))}
    latest = len(d.migrations) - 1
    if done and max(done) > latest:
        raise d.newer_schema_error(max(done), latest)
    for version, statements in enumerate(d.migrations):
        if version in done:
            continue
        guard = d.upgrade_guard(version) if done else None
        if guard is not None and (yield Op(guard)):
            raise d.refused_upgrade_error(version)
        for statement in statements:
            yield Op(statement, kind="exec")
        yield Op(d.insert_migration, (version,), kind="exec")
    return latest


def put(
    d: Dialect,
    codec: CompactCodec,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: Mapping[str, Any],
    new_versions: ChannelVersions,
) -> Flow[CompactPlan]:
    """Store a checkpoint row, its blobs and the pieces they reference; returns the plan,
    to ``commit()`` once the transaction is."""
    key = _short_thread(config)
    if key is None:  # (a long thread id: its key, made if needed)
        key = yield from _thread_key(d, codec, thread_target(config)[0], create=True)
    plan = codec.plan_put(config, checkpoint, metadata, new_versions, thread_key=key)
    if plan.piece_rows:
        yield Op(d.insert_pieces, plan.piece_rows, kind="many")
    if plan.blob_rows:
        yield Op(d.insert_blobs, plan.blob_rows, kind="many")
    yield Op(d.upsert_checkpoint, plan.checkpoint_row, kind="exec")
    return plan


def put_writes(
    d: Dialect,
    codec: CompactCodec,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Flow[WritesPlan]:
    """Store a task's writes: regular ones keep an existing row, special ones replace it.

    A task's regular writes go in as one merged row when the task has none stored yet.
    """
    key = _short_thread(config)
    if key is None:  # (a long thread id: its key, made if needed)
        key = yield from _thread_key(d, codec, thread_target(config)[0], create=True)
    plan = codec.plan_write_rows(config, writes, task_id, task_path, thread_key=key)
    if plan.pieces:
        yield Op(d.insert_pieces, plan.pieces, kind="many")
    regular = plan.regular
    if plan.merged is not None:
        task = plan.merged
        task_key = (task[0], task[1], task[2], task[3])
        if d.insert_merged_writes is not None:  # (the check is part of the insert)
            if (yield Op(d.insert_merged_writes, (*task, *task_key))):
                regular = []
        elif not (yield Op(d.select_task_writes, task_key)):
            regular = [plan.merged]
    if regular:
        yield Op(d.insert_writes, regular, kind="many")
    if plan.special:
        yield Op(d.upsert_writes, plan.special, kind="many")
    return plan


def batch(d: Dialect, codec: CompactCodec, ops: Sequence[tuple[Any, ...]]) -> Flow[None]:
    """Several ``put``/``put_writes`` calls (engine save ops) in one transaction, in order.

    Each plan is remembered as soon as it is made, so a put can be a diff of the put before
    it in the same batch; if the transaction fails, the caller calls ``codec.forget_ops``.
    The rows of all the plans are then stored with one statement per kind (``_store``).
    """
    if len(ops) <= 2:  # (one step's save: the plain flows, no grouping to pay for)
        for op in ops:
            if op[0] == "put":
                plan = yield from put(d, codec, op[1], op[2], op[3], op[4])
                plan.commit()
            elif op[2]:
                codec.written((yield from put_writes(d, codec, op[1], op[2], op[3], op[4])))
        return
    puts: list[CompactPlan] = []
    writes: list[WritesPlan] = []
    for op in ops:
        key = _short_thread(op[1])
        if key is None:
            key = yield from _thread_key(d, codec, thread_target(op[1])[0], create=True)
        if op[0] == "put":
            plan = codec.plan_put(op[1], op[2], op[3], op[4], thread_key=key)
            plan.commit()
            puts.append(plan)
        elif op[2]:
            w = codec.plan_write_rows(op[1], op[2], op[3], op[4], thread_key=key)
            codec.written(w)
            writes.append(w)
    yield from _store(d, puts, writes)


def _store(d: Dialect, puts: list[CompactPlan], writes: list[WritesPlan]) -> Flow[None]:
    """The rows of a batch's plans, one ``executemany`` per kind. The writes keep the order
    of the plans: a task's regular writes go in as one merged row only when the task has
    none stored (found for all the batch's tasks by one query) nor from a plan before."""
    pieces = [row for p in puts for row in p.piece_rows]
    pieces.extend(row for w in writes for row in w.pieces)
    if pieces:
        yield Op(d.insert_pieces, pieces, kind="many")
    blobs = [row for p in puts for row in p.blob_rows]
    if blobs:
        yield Op(d.insert_blobs, blobs, kind="many")
    if puts:
        yield Op(d.upsert_checkpoint, [p.checkpoint_row for p in puts], kind="many")
    if not writes:
        return
    tasks = list(dict.fromkeys(w.merged[:4] for w in writes if w.merged is not None))
    stored: set[tuple[Any, ...]] = set()
    if tasks:
        found = yield Op(d.select_written_tasks, d.keys(tasks, 4))
        stored = {tuple(row) for row in found}
    regular: list[WriteRow] = []
    special: list[WriteRow] = []
    for w in writes:
        rows = w.regular
        if w.merged is not None:
            task = w.merged[:4]
            if task not in stored:
                rows = [w.merged]
                stored.add(task)  # (a later plan of this task keeps what this one stored)
        elif rows:
            stored.add(rows[0][:4])
        regular.extend(rows)
        special.extend(w.special)
    if regular:
        yield Op(d.insert_writes, regular, kind="many")
    if special:
        yield Op(d.upsert_writes, special, kind="many")


def _short_thread(config: RunnableConfig) -> str | None:
    """The thread id a save's rows store as it is, ``None`` for one stored under a key
    (``_thread_key``): the usual case needs no statement, so no generator."""
    thread_id = thread_target(config)[0]
    return thread_id if _stored_as_is(thread_id) else None


def _thread_key(
    d: Dialect, codec: CompactCodec, thread_id: str, create: bool
) -> Flow[str | None]:
    """What rows store for ``thread_id``: itself, or the short key of a long id (``None``:
    a long id with no key yet, so no rows). Keys found in the database are remembered."""
    if _stored_as_is(thread_id):
        return thread_id
    known = codec.thread_keys.get(thread_id)
    if known is not None:
        return known
    key = yield from thread_key(d, thread_id, create)
    if key is not None and not create:
        codec.remember_thread_key(thread_id, key)
    return key


def _stored_as_is(thread_id: str) -> bool:
    """Rows store a short thread id as it is (a long one, or one like a key, under a key)."""
    return len(thread_id) <= THREAD_KEY_AFTER and not thread_id.startswith("#")


def thread_key(d: Dialect, thread_id: str, create: bool) -> Flow[str | None]:
    """The key a long thread id is stored under (``#<n>``); ``None`` if it has none yet."""
    if create:
        yield Op(d.insert_thread, (thread_id,), kind="exec")
    rows = yield Op(d.select_thread_key, (thread_id,))
    return f"#{rows[0][0]}" if rows else None


def delete_thread(d: Dialect, codec: CompactCodec, thread_id: str) -> Flow[str | None]:
    """Delete every row of a thread; returns the key its rows were stored under. (A long
    id keeps its key, so a process that still remembers the key stays right.)"""
    key = yield from _thread_key(d, codec, thread_id, create=False)
    if key is None:
        return None
    for sql in d.delete_thread:
        yield Op(sql, (key,), kind="exec")
    return key


def get_tuple(
    d: Dialect, codec: CompactCodec, thread_id: str, ns: str, checkpoint_id: str | None
) -> Flow[CheckpointTuple | None]:
    """The named checkpoint, or the latest of the thread/namespace."""
    key = yield from _thread_key(d, codec, thread_id, create=False)
    if key is None:
        return None
    if checkpoint_id is None:
        rows = yield Op(d.select_latest, (key, ns))
    else:
        rows = yield Op(d.select_checkpoint, (key, ns, stored_id(checkpoint_id)))
    if not rows:
        return None
    found = yield from _load(d, codec, rows, names={key: thread_id})
    return found[0]


def list_checkpoints(d: Dialect, codec: CompactCodec, q: ListQuery) -> Flow[list[CheckpointTuple]]:
    """Checkpoints matching ``q``, newest first."""
    names: dict[str, str] = {}
    if q.thread_id is not None:
        key = yield from _thread_key(d, codec, q.thread_id, create=False)
        if key is None:
            return []
        names[key] = q.thread_id
        q = replace(q, thread_id=key)
    sql, params = d.list_query(q.stored())
    rows = yield Op(sql, params)
    if not rows:
        return []
    decoded = yield from _decode(d, codec, rows)
    if q.filter:
        picked = [(row, dec) for row, dec in zip(rows, decoded, strict=True) if q.matches(dec[2])]
        if q.limit is not None:
            picked = picked[: max(q.limit, 0)]
        rows, decoded = [p[0] for p in picked], [p[1] for p in picked]
    if not rows:
        return []
    return (yield from _load(d, codec, rows, decoded, names))


_PIECES_PER_QUERY = 500
_TYPE = itemgetter(4)
"""The stored type of a ``select_blobs`` row."""
_THREAD_TYPE = itemgetter(2)
"""The stored type of a ``select_thread_blobs`` row."""


def _decode(d: Dialect, codec: CompactCodec, rows: Sequence[CompactRow]) -> Flow[list[Decoded]]:
    """Decode checkpoint rows, fetching the parents that diff rows need (one query)."""
    want, pinned = codec.needs_chain(rows)
    ancestors = (yield Op(d.select_chains, d.keys(want, 3))) if want else []
    return codec.load_checkpoints(rows, ancestors, pinned)


def _blobs(d: Dialect, keys: set[tuple[str, str, str, str]]) -> Flow[dict[Any, Any]]:
    """The blob rows of ``keys`` with every row of their delta chains, by key."""
    threads = {key[:2] for key in keys}
    if len(threads) > 1:
        found = yield Op(d.select_blobs, d.keys(list(keys), 4))
        types = {t: loaded_type(t) for t in set(map(_TYPE, found))}  # (few: not one call a row)
        return {(b[0], b[1], b[2], b[3]): (types[b[4]], b[5], b[6]) for b in found}
    ((thread_id, ns),) = threads  # (the usual read: rows without the thread and namespace)
    params = (*d.keys([key[2:] for key in keys], 2), thread_id, ns, thread_id, ns)
    found = yield Op(d.select_thread_blobs, params)
    types = {t: loaded_type(t) for t in set(map(_THREAD_TYPE, found))}
    return {(thread_id, ns, b[0], b[1]): (types[b[2]], b[3], b[4]) for b in found}


def _load(
    d: Dialect,
    codec: CompactCodec,
    rows: Sequence[CompactRow],
    decoded: list[Decoded] | None = None,
    names: dict[str, str] | None = None,
) -> Flow[list[CheckpointTuple]]:
    """Tuples for checkpoint rows: the parents diff rows need, then all blobs (delta chains
    included), the writes, and the pieces split values reference, one query each."""
    if decoded is None:
        decoded = yield from _decode(d, codec, rows)
    names = dict(names or {})
    unknown = sorted({r[0] for r in rows if r[0].startswith("#") and r[0] not in names})
    if unknown:
        found = yield Op(d.select_thread_ids, d.keys([[k[1:]] for k in unknown], 1))
        names.update((f"#{key}", thread_id) for key, thread_id in found)
    keys = {
        (row[0], row[1], channel, codec.blob_version(version))
        for row, (cp, inline, _) in zip(rows, decoded, strict=True)
        for channel, version in cp["channel_versions"].items()
        if channel not in inline
    }
    blobs = (yield from _blobs(d, keys)) if keys else {}
    writes: defaultdict[tuple[str, str, str], list[WriteRow]] = defaultdict(list)
    all_writes = codec.expand_writes(
        (yield Op(d.select_writes, d.keys([row[:3] for row in rows], 3)))
    )
    for w in all_writes:
        writes[(w[0], w[1], w[2])].append(w)
    # (lists read before: only their new rows are walked)
    recalled = codec.recall(blobs, {key[:3] for key in keys})
    pieces, missing = codec.piece_refs([dec[1] for dec in decoded], blobs, all_writes, recalled)
    if missing:
        for tid in sorted({row[0] for row in rows}):  # pieces are stored per thread
            for i in range(0, len(missing), _PIECES_PER_QUERY):
                chunk = missing[i : i + _PIECES_PER_QUERY]
                found = yield Op(d.select_pieces(len(chunk)), d.piece_params(tid, chunk))
                pieces.update(codec.fetched_pieces(found))
    return [
        codec.load_tuple(
            row,  # type: ignore[arg-type]
            cp,
            md,
            blobs.get,
            writes.get((row[0], row[1], row[2]), ()),
            inline=inline,
            piece=pieces.get,
            thread_name=names.get(row[0]),
            recalled=recalled,
        )
        for row, (cp, inline, md) in zip(rows, decoded, strict=True)
    ]
