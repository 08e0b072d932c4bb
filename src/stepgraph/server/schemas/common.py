"""Models shared by several resources: config, checkpoint references, interrupts, errors."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from stepgraph.server.schemas.fields import (
    CheckpointId,
    CheckpointNs,
    JsonObject,
    OptId,
    RequestModel,
    ResponseModel,
    SafeStr,
)

__all__ = ["Checkpoint", "CheckpointRef", "Config", "ErrorBody", "Interrupt", "RunError"]


class Config(RequestModel):
    """A run or assistant config (other keys, e.g. ``run_name``, pass through)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    tags: list[SafeStr] | None = None
    recursion_limit: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    max_concurrency: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    run_name: Annotated[str, Field(max_length=4096)] | None = None
    configurable: JsonObject | None = None
    metadata: JsonObject | None = None


class CheckpointRef(RequestModel):
    """Which checkpoint: ``thread_id``/``checkpoint_ns``/``checkpoint_id`` (+ ``checkpoint_map``)."""

    thread_id: OptId | None = None
    checkpoint_ns: CheckpointNs | None = None
    checkpoint_id: CheckpointId | None = None
    checkpoint_map: JsonObject | None = None


class Checkpoint(ResponseModel):
    """A checkpoint as responses show it."""

    thread_id: str | None
    checkpoint_ns: str
    checkpoint_id: str | None
    checkpoint_map: JsonObject | None = None


class Interrupt(ResponseModel):
    """An interrupt in state and thread records: ``{"id", "value"}``."""

    id: str | None
    value: Any = None


class RunError(ResponseModel):
    """What a failed run reports: the exception's class name and message."""

    error: str
    message: str


class ErrorBody(ResponseModel):
    """Every error response: ``{"detail": "..."}`` (coded, with a hint, for bad requests)."""

    model_config = ConfigDict(extra="forbid")

    detail: str
