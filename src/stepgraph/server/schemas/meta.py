"""Meta endpoints and the v3 protocol's bodies."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from stepgraph.server.schemas.fields import (
    JsonObject,
    QueryModel,
    RequestModel,
    ResponseModel,
    SafeStr,
)

__all__ = ["EventStreamRequest", "Info", "MetricsQuery", "Ok", "ProtocolCommand", "ProtocolEnvelope", "SseEvent"]


class Ok(ResponseModel):
    """Health check."""

    ok: bool
    services: JsonObject


class Info(ResponseModel):
    """Server version and feature flags."""

    version: str
    langgraph_py_version: str
    runtime: str
    flags: dict[str, bool]
    host: JsonObject
    graphs: list[str]
    database: str


class MetricsQuery(QueryModel):
    """``GET /metrics?format=``: Prometheus text (the default) or JSON."""

    format: Literal["prometheus", "json"] = "prometheus"


class ProtocolCommand(RequestModel):
    """A v3 protocol command (answered 400 when ``id`` or ``method`` is missing or mistyped)."""

    id: int
    method: Annotated[str, Field(max_length=256)]
    params: Any = None


class EventStreamRequest(RequestModel):
    """What a v3 event stream delivers (answered 400 when malformed)."""

    channels: Annotated[list[SafeStr], Field(min_length=1)]
    namespaces: list[list[SafeStr]] | None = None
    depth: Annotated[int, Field(ge=0)] | None = None
    since: Annotated[int, Field(ge=0)] | None = None


class ProtocolEnvelope(ResponseModel):
    """A command's answer: ``success`` with ``result``, or ``error`` with a code and message."""

    type: Literal["success", "error"]
    id: int | None
    result: Any = None
    meta: JsonObject | None = None
    error: str | None = None
    message: str | None = None


class SseEvent(ResponseModel):
    """One server-sent event: ``event`` names it, ``data`` is one line of JSON, ``id`` is
    present for resumable runs (``<ms>-<seq>``) and v3 streams."""

    event: str | None = None
    data: str | None = None
    id: str | None = None
