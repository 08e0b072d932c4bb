"""Crons: request bodies and the Cron record (``langgraph_sdk``'s ``client.crons`` shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from stepgraph.server.schemas.common import Config
from stepgraph.server.schemas.fields import (
    Id,
    JsonObject,
    NodeNames,
    Offset,
    OneOrMany,
    OptId,
    RequestModel,
    ResponseModel,
    SafeStr,
    SearchFilter,
    SortOrder,
    partial,
)
from stepgraph.server.schemas.runs import Strategy, StreamMode

__all__ = ["Cron", "CronCount", "CronCreate", "CronFields", "CronPatch", "CronSearch"]

CronSortBy = Literal["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date",
                     "end_time"]
CronSelectField = Literal["cron_id", "assistant_id", "thread_id", "end_time", "schedule", "timezone",
                          "created_at", "updated_at", "user_id", "payload", "next_run_date", "metadata",
                          "now", "on_run_completed", "enabled"]
OnRunCompleted = Literal["delete", "keep"]
Schedule = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f-\x9f]*$",
                                description="A cron expression (minute hour day-of-month month day-of-week), "
                                            "evaluated in `timezone`.")]
TimeZone = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_+\-/]+$",
                                description="An IANA time zone name; UTC when absent.")]
Webhook = Annotated[SafeStr, Field(max_length=4096, description=(
    "An http(s) URL POSTed each finished run; checked against the server's webhook URL policy."))]


def _iso_time(value: str) -> str:
    from stepgraph.server.runtime.cronspec import parse_time

    if parse_time(value) is None:
        raise PydanticCustomError("custom_datetime", "expected an ISO 8601 date-time")
    return value


DateTime = Annotated[str, Field(max_length=64, json_schema_extra={"format": "date-time"}),
                     AfterValidator(_iso_time)]


class _RunFields(RequestModel):
    """What each firing's run is made of (as in a run-creation body)."""

    input: Any = None
    metadata: JsonObject | None = None
    config: Config | None = None
    context: JsonObject | None = None
    checkpoint_during: bool | None = None
    interrupt_before: NodeNames | None = None
    interrupt_after: NodeNames | None = None
    webhook: Webhook | None = None
    stream_mode: OneOrMany(StreamMode, "a stream mode or a list of them") | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None


class CronCreate(_RunFields):
    """``POST /runs/crons`` (a new thread per firing) and ``POST /threads/{thread_id}/runs/crons``
    (every firing on that thread; ``on_run_completed`` does not apply)."""

    assistant_id: Id = Field(description="An assistant UUID or a registered graph id.")
    schedule: Schedule
    timezone: TimeZone | None = None
    end_time: DateTime | None = Field(default=None, description="No firing after this time.")
    enabled: bool | None = None
    on_run_completed: OnRunCompleted | None = Field(default=None, description=(
        "Stateless crons: 'delete' (default) removes each firing's thread when its run ends, "
        "'keep' keeps it."))
    multitask_strategy: Strategy | None = None


class CronPatch(_RunFields):
    """``PATCH /runs/crons/{cron_id}``: the fields to change (``end_time: null`` clears it)."""

    schedule: Schedule | None = None
    timezone: TimeZone | None = None
    end_time: DateTime | None = None
    enabled: bool | None = None
    on_run_completed: OnRunCompleted | None = None


class CronCount(RequestModel):
    """``POST /runs/crons/count``: the filters."""

    assistant_id: Id | None = None
    thread_id: OptId | None = None
    enabled: bool | None = None
    metadata: SearchFilter | None = None


class CronSearch(CronCount):
    """``POST /runs/crons/search``."""

    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    offset: Offset | None = None
    sort_by: CronSortBy | None = None
    sort_order: SortOrder | None = None
    select: Annotated[list[CronSelectField], Field(max_length=32)] | None = None


class Cron(ResponseModel):
    """A cron: a schedule and the run payload it starts."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    user_id: str | None
    end_time: datetime | None
    schedule: str
    timezone: str | None
    payload: JsonObject
    next_run_date: datetime | None
    metadata: JsonObject
    on_run_completed: OnRunCompleted | None
    enabled: bool
    created_at: datetime
    updated_at: datetime


CronFields = partial(Cron)
