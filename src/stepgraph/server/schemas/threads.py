"""Threads and their state: request bodies, query parameters and responses."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from stepgraph.server.request_limits import MAX_TTL_MINUTES
from stepgraph.server.resources.extract import MAX_EXTRACT_PATHS, PATH_PATTERN
from stepgraph.server.schemas.common import Checkpoint, CheckpointRef, Interrupt
from stepgraph.server.schemas.fields import (
    CheckpointId,
    Id,
    JsonObject,
    Offset,
    OptId,
    Page,
    QueryModel,
    RequestModel,
    ResponseModel,
    SearchFilter,
    SortOrder,
    StrList,
    expected,
    partial,
)

__all__ = [
    "HistoryQuery",
    "HistoryRequest",
    "PruneResponse",
    "StateCheckpointRequest",
    "StateQuery",
    "StateUpdate",
    "StateUpdateResponse",
    "Thread",
    "ThreadCount",
    "ThreadCreate",
    "ThreadFields",
    "ThreadPatch",
    "ThreadPrune",
    "ThreadSearch",
    "ThreadState",
]

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
ThreadSortBy = Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"]
Minutes = Annotated[float, Field(gt=0, le=MAX_TTL_MINUTES, allow_inf_nan=False)]


class ThreadTtl(RequestModel):
    """A thread's time to live."""

    strategy: Literal["delete", "keep_latest"] | None = None
    ttl: Minutes | None = None


ExtractAlias = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]
ExtractPath = Annotated[str, Field(max_length=512, pattern=PATH_PATTERN,
                                   description="dot keys and [index] steps, e.g. values.messages[-1]")]
TtlField = Annotated[Minutes | ThreadTtl, expected("a number of minutes or {strategy, ttl}")]


class SuperstepUpdate(RequestModel):
    """One update of a superstep: ``values`` as if ``as_node`` returned them."""

    values: Any = None
    as_node: Id | None = None
    command: Any = None


class Superstep(RequestModel):
    """Updates applied together, as one step."""

    updates: Annotated[list[SuperstepUpdate], Field(min_length=1)]


class ThreadCreate(RequestModel):
    """``POST /threads`` (a client-chosen ``thread_id`` is allowed)."""

    thread_id: OptId | None = None
    metadata: JsonObject | None = None
    if_exists: Literal["raise", "do_nothing"] | None = None
    ttl: TtlField | None = None
    supersteps: list[Superstep] | None = None


class ThreadPatch(RequestModel):
    """``PATCH /threads/{thread_id}``: metadata to merge."""

    metadata: JsonObject | None = None
    ttl: TtlField | None = None


class ThreadCount(RequestModel):
    """``POST /threads/count``: the filters."""

    ids: StrList | None = None
    metadata: SearchFilter | None = None
    values: SearchFilter | None = None
    status: ThreadStatus | None = None


class ThreadSearch(ThreadCount):
    """``POST /threads/search``."""

    limit: Page | None = None
    offset: Offset | None = None
    sort_by: ThreadSortBy | None = None
    sort_order: SortOrder | None = None
    select: StrList | None = None
    extract: Annotated[dict[ExtractAlias, ExtractPath], Field(max_length=MAX_EXTRACT_PATHS)] | None = None


class ThreadPrune(RequestModel):
    """``POST /threads/prune``."""

    thread_ids: StrList
    strategy: Literal["delete", "keep_latest"] | None = None


class StateQuery(QueryModel):
    """``?subgraphs=`` of the state endpoints."""

    subgraphs: bool = False


class StateCheckpointRequest(RequestModel):
    """``POST /threads/{thread_id}/state/checkpoint``."""

    checkpoint: CheckpointRef
    subgraphs: bool | None = None


class StateUpdate(RequestModel):
    """``POST /threads/{thread_id}/state``."""

    values: Any = None
    as_node: Id | None = None
    checkpoint: CheckpointRef | None = None
    checkpoint_id: CheckpointId | None = None


class BeforeConfig(RequestModel):
    """A config holding the checkpoint: ``{"configurable": {...}}``."""

    configurable: CheckpointRef


def _before_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "id"
    if isinstance(value, dict):
        return "config" if "configurable" in value else "checkpoint"
    return None


Before = Annotated[Annotated[CheckpointId, Tag("id")] | Annotated[BeforeConfig, Tag("config")]
                   | Annotated[CheckpointRef, Tag("checkpoint")],
                   Discriminator(_before_kind, custom_error_type="custom_expected",
                                 custom_error_message="expected a checkpoint id, a checkpoint object or "
                                                      "{configurable: checkpoint}")]


class HistoryRequest(RequestModel):
    """``POST /threads/{thread_id}/history``."""

    limit: Page | None = None
    before: Before | None = None
    metadata: JsonObject | None = None
    checkpoint: CheckpointRef | None = None


class HistoryQuery(QueryModel):
    """``GET /threads/{thread_id}/history``."""

    limit: Page = 10
    before: CheckpointId | None = None


class Thread(ResponseModel):
    """A thread: metadata, status and a copy of its latest values and interrupts."""

    thread_id: str
    created_at: datetime
    updated_at: datetime
    state_updated_at: datetime | None = None
    metadata: JsonObject
    status: ThreadStatus
    config: JsonObject | None = None
    values: Any = None
    interrupts: dict[str, list[Interrupt]] | None = None
    error: Any = None
    extracted: JsonObject | None = None


ThreadFields = partial(Thread)


class ThreadTask(ResponseModel):
    """A pending (or failed) task of a state."""

    id: str
    name: str
    path: list[Any]
    error: str | None
    interrupts: list[Interrupt]
    checkpoint: JsonObject | None
    state: ThreadState | None
    result: Any = None


class ThreadState(ResponseModel):
    """A thread's state at one checkpoint."""

    values: Any
    next: list[str]
    tasks: list[ThreadTask]
    metadata: JsonObject | None
    created_at: str | None
    checkpoint: Checkpoint | None
    parent_checkpoint: Checkpoint | None
    interrupts: list[Interrupt]
    checkpoint_id: str | None
    parent_checkpoint_id: str | None


class StateUpdateResponse(ResponseModel):
    """The checkpoint an update created."""

    checkpoint: Checkpoint
    configurable: Checkpoint
    checkpoint_id: str | None


class PruneResponse(ResponseModel):
    """How many threads were pruned."""

    pruned_count: int


ThreadTask.model_rebuild()
