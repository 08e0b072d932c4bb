"""A2A (agent-to-agent protocol, JSON-RPC 2.0): the agent card and the RPC envelopes."""

from __future__ import annotations

from typing import Any, Literal

from stepgraph.server.schemas.fields import (
    JsonObject,
    QueryModel,
    RequestModel,
    ResponseModel,
    Uuid,
)

__all__ = ["AgentCard", "AgentCardQuery", "JsonRpcRequest", "JsonRpcResponse", "McpMessage"]


class AgentCardQuery(QueryModel):
    """``GET /.well-known/agent-card.json?assistant_id=...``."""

    assistant_id: Uuid


class AgentSkill(ResponseModel):
    """What the agent can do (one skill: its graph)."""

    id: str
    name: str
    description: str
    tags: list[str]


class AgentCapabilities(ResponseModel):
    streaming: bool
    pushNotifications: bool  # noqa: N815 - the protocol's names
    stateTransitionHistory: bool  # noqa: N815


class AgentCard(ResponseModel):
    """An assistant described for A2A clients (protocol 0.3)."""

    protocolVersion: str  # noqa: N815
    name: str
    description: str
    url: str
    preferredTransport: str  # noqa: N815
    version: str
    capabilities: AgentCapabilities
    defaultInputModes: list[str]  # noqa: N815
    defaultOutputModes: list[str]  # noqa: N815
    skills: list[AgentSkill]


class JsonRpcRequest(RequestModel):
    """A JSON-RPC 2.0 request: ``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``."""

    jsonrpc: Literal["2.0"]
    id: str | int | float | None = None
    method: Literal["message/send", "message/stream", "tasks/get", "tasks/cancel"]
    params: JsonObject | None = None


class JsonRpcResponse(ResponseModel):
    """A JSON-RPC 2.0 response: ``result`` (a Task) or ``error`` (``code``, ``message``)."""

    jsonrpc: Literal["2.0"]
    id: str | int | float | None = None
    result: JsonObject | None = None
    error: dict[str, Any] | None = None



class McpMessage(RequestModel):
    """A Model Context Protocol JSON-RPC message (``initialize``, ``tools/list``,
    ``tools/call``, a notification); the ``mcp`` SDK validates it."""

    jsonrpc: Literal["2.0"]
    id: str | int | None = None
    method: str | None = None
    params: JsonObject | None = None
