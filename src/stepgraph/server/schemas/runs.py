"""Runs: the run-creation body shared by ``/runs``, ``/runs/stream``, ``/runs/wait`` (with or
without a thread), the other runs endpoints' parameters, and the Run record."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from stepgraph.server.request_limits import MAX_SECONDS
from stepgraph.server.runtime.wire import WIRE_MODES
from stepgraph.server.schemas.common import CheckpointRef, Config, RunError
from stepgraph.server.schemas.fields import (
    CheckpointId,
    Id,
    JsonObject,
    NodeNames,
    Offset,
    OneOrMany,
    OptId,
    Page,
    QueryModel,
    RequestModel,
    ResponseModel,
    SafeStr,
    StrList,
    Uuid,
    expected,
    partial,
)

__all__ = [
    "CancelManyQuery",
    "CancelQuery",
    "Command",
    "JoinQuery",
    "JoinStreamQuery",
    "ListRunsQuery",
    "Run",
    "RunCreate",
    "RunFields",
    "RunsCancel",
    "Send",
    "ThreadStreamQuery",
]

StreamMode = Literal[WIRE_MODES]  # type: ignore[valid-type]
RunStatus = Literal["pending", "running", "success", "error", "timeout", "interrupted"]
Strategy = Literal["reject", "interrupt", "rollback", "enqueue"]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]


class Send(RequestModel):
    """A ``Send``: run ``node`` with ``input``."""

    node: Id
    input: Any = None


Goto = Annotated[Id | Send | list[Id | Send],
                 expected("a node name, a Send {node, input} or a list of them")]
Update = Annotated[JsonObject | list[Any], expected("an object or a list of [key, value] pairs")]


class Command(RequestModel):
    """``command``: resume an interrupt, update the state, go to nodes."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    resume: Any = None
    update: Update | None = None
    goto: Goto | None = None


class RunCreate(RequestModel):
    """A run to create (``thread_id`` comes from the path; none for a stateless run)."""

    assistant_id: Id = Field(description="An assistant UUID or a registered graph id.")
    input: Any = None
    command: Command | None = None
    stream_mode: OneOrMany(StreamMode, "a stream mode or a list of them") | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    interrupt_before: NodeNames | None = None
    interrupt_after: NodeNames | None = None
    config: Config | None = None
    context: JsonObject | None = None
    metadata: JsonObject | None = None
    checkpoint: CheckpointRef | None = None
    checkpoint_id: CheckpointId | None = None
    checkpoint_during: bool | None = None
    multitask_strategy: Strategy | None = None
    if_not_exists: Literal["reject", "create"] | None = None
    on_disconnect: Literal["cancel", "continue"] | None = None
    on_completion: Literal["delete", "keep"] | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    after_seconds: Seconds | None = None
    webhook: Annotated[SafeStr, Field(max_length=4096, description=(
        "An http(s) URL POSTed the finished run; checked against the server's webhook URL policy "
        "when the run is created (422, SG530, for a refused scheme, host or address)."))] | None = None
    feedback_keys: StrList | None = None


class RunsCancel(RequestModel):
    """``POST /runs/cancel``: by thread and run ids, or every run with a status."""

    thread_id: OptId | None = None
    run_ids: OneOrMany(Uuid, "a run id or a list of run ids") | None = None
    status: Literal["pending", "running", "all"] | None = None


class ListRunsQuery(QueryModel):
    """``GET /threads/{thread_id}/runs``."""

    limit: Page = 10
    offset: Offset = 0
    status: RunStatus | None = None
    select: list[Id] = []


class JoinQuery(QueryModel):
    """``GET .../join``."""

    cancel_on_disconnect: bool = False


class JoinStreamQuery(QueryModel):
    """``GET .../stream``: ``stream_mode`` filters the events (repeat it or join with commas)."""

    stream_mode: list[SafeStr] = []
    cancel_on_disconnect: bool = False


class ThreadStreamQuery(QueryModel):
    """``GET /threads/{thread_id}/stream``."""

    stream_mode: list[SafeStr] = []


class CancelQuery(QueryModel):
    """``POST .../cancel``."""

    wait: bool = False
    action: Literal["interrupt", "rollback"] = "interrupt"


class CancelManyQuery(QueryModel):
    """``POST /runs/cancel?action=``."""

    action: Literal["interrupt", "rollback"] = "interrupt"


class Run(ResponseModel):
    """A run record."""

    run_id: str
    thread_id: str
    assistant_id: str
    metadata: JsonObject
    status: RunStatus
    kwargs: JsonObject
    multitask_strategy: Strategy
    created_at: datetime
    updated_at: datetime
    error: RunError | None = Field(default=None, description=(
        "Why a run with status 'error' failed (e.g. 'worker lost: server restarted' for a run a "
        "killed server left running); absent otherwise."))


RunFields = partial(Run)
