"""Assistants: request bodies, query parameters and responses (LangGraph's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from stepgraph.server.schemas.common import Config
from stepgraph.server.schemas.fields import (
    Id,
    JsonObject,
    Offset,
    QueryModel,
    RequestModel,
    ResponseModel,
    SearchFilter,
    SortOrder,
    StrList,
    Uuid,
    expected,
    partial,
)

__all__ = [
    "Assistant",
    "AssistantCount",
    "AssistantCreate",
    "AssistantFields",
    "AssistantLatest",
    "AssistantPatch",
    "AssistantSearch",
    "AssistantVersion",
    "AssistantVersions",
    "DeleteAssistantQuery",
    "GraphJson",
    "GraphQuery",
    "GraphSchema",
    "SubgraphSchema",
    "SubgraphsQuery",
]

Name = Annotated[str, Field(max_length=4096)]
AssistantSortBy = Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"]


class AssistantCreate(RequestModel):
    """``POST /assistants``."""

    graph_id: Id
    assistant_id: Uuid | None = None
    config: Config | None = None
    context: JsonObject | None = None
    metadata: JsonObject | None = None
    if_exists: Literal["raise", "do_nothing"] | None = None
    name: Name | None = None
    description: Name | None = None


class AssistantPatch(RequestModel):
    """``PATCH /assistants/{assistant_id}``: the fields to change."""

    graph_id: Id | None = None
    config: Config | None = None
    context: JsonObject | None = None
    metadata: JsonObject | None = None
    name: Name | None = None
    description: Name | None = None


class AssistantCount(RequestModel):
    """``POST /assistants/count``: the filters."""

    metadata: SearchFilter | None = None
    graph_id: Id | None = None
    name: Name | None = None


class AssistantSearch(AssistantCount):
    """``POST /assistants/search``."""

    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    offset: Offset | None = None
    sort_by: AssistantSortBy | None = None
    sort_order: SortOrder | None = None
    select: StrList | None = None


class AssistantVersions(RequestModel):
    """``POST /assistants/{assistant_id}/versions``: a page of versions, newest first."""

    metadata: SearchFilter | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    offset: Offset | None = None


class AssistantLatest(RequestModel):
    """``POST /assistants/{assistant_id}/latest``."""

    version: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None


def _query_xray(value: Any) -> Any:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        try:
            return max(int(low), 0)
        except ValueError:
            return value
    return value


class DeleteAssistantQuery(QueryModel):
    """``DELETE /assistants/{assistant_id}?delete_threads=``."""

    delete_threads: bool = False


class GraphQuery(QueryModel):
    """``GET /assistants/{assistant_id}/graph?xray=``: ``true``, ``false`` or a depth."""

    xray: Annotated[bool | Annotated[int, Field(ge=0, le=1000)],
                    BeforeValidator(_query_xray, json_schema_input_type=bool | int),
                    expected("true, false or an integer")] = False


class SubgraphsQuery(QueryModel):
    """``GET /assistants/{assistant_id}/subgraphs?recurse=``."""

    recurse: bool = False


class Assistant(ResponseModel):
    """An assistant: a graph plus its config, context and metadata."""

    assistant_id: str
    graph_id: str
    config: JsonObject
    context: JsonObject
    metadata: JsonObject
    name: str
    description: str | None
    version: int
    created_at: datetime
    updated_at: datetime


AssistantFields = partial(Assistant)


class AssistantVersion(ResponseModel):
    """One stored version of an assistant."""

    assistant_id: str
    graph_id: str
    config: JsonObject
    context: JsonObject
    metadata: JsonObject
    name: str
    description: str | None
    version: int
    created_at: datetime


class GraphSchema(ResponseModel):
    """The JSON schemas of a graph."""

    graph_id: str
    input_schema: JsonObject | None
    output_schema: JsonObject | None
    state_schema: JsonObject | None
    config_schema: JsonObject | None
    context_schema: JsonObject | None


class SubgraphSchema(ResponseModel):
    """The JSON schemas of one subgraph."""

    input_schema: JsonObject | None
    output_schema: JsonObject | None
    state_schema: JsonObject | None
    config_schema: JsonObject | None
    context_schema: JsonObject | None


class GraphNode(ResponseModel):
    """A node of a drawable graph."""

    id: str
    type: str | None = None
    data: JsonObject | None = None
    metadata: JsonObject | None = None


class GraphEdge(ResponseModel):
    """An edge of a drawable graph."""

    source: str
    target: str
    data: Any = None
    conditional: bool | None = None


class GraphJson(ResponseModel):
    """A drawable graph (``RemoteGraph.get_graph`` rebuilds it)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
