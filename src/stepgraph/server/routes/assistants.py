"""Assistants: create, search, count, get, patch, delete, graph, schemas, subgraphs, versions."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stepgraph.server.auth import authorize, authorize_model
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import json_response
from stepgraph.server.resources.common import pagination_headers
from stepgraph.server.routes._common import PAGINATION, ctx_of, engine_errors, no_content
from stepgraph.server.schemas.assistants import (
    Assistant,
    AssistantCount,
    AssistantCreate,
    AssistantFields,
    AssistantLatest,
    AssistantPatch,
    AssistantSearch,
    AssistantVersion,
    AssistantVersions,
    DeleteAssistantQuery,
    GraphJson,
    GraphQuery,
    GraphSchema,
    SubgraphSchema,
    SubgraphsQuery,
)
from stepgraph.server.schemas.fields import Uuid

__all__ = ["ROUTES"]

_UUID_ONLY = (("assistant_id", Uuid),)
"""These routes take an assistant UUID only (422 ``Invalid assistant ID: must be a UUID``)."""


def _graph_json(drawable: Any) -> dict[str, Any]:
    """The drawable graph as the API sends it (``data`` reduced to the node's ``name``)."""
    raw = drawable.to_json()
    nodes = []
    for node in raw.get("nodes", []):
        out = {"id": node["id"]}
        if "type" in node:
            out["type"] = node["type"]
            data = node.get("data")
            name = data.get("name", node["id"]) if isinstance(data, dict) else (data or node["id"])
            out["data"] = {"name": name}
        if node.get("metadata"):
            out["metadata"] = node["metadata"]
        nodes.append(out)
    edges = [{k: e[k] for k in ("source", "target", "data", "conditional") if k in e and e[k] is not None}
             for e in raw.get("edges", [])]
    return {"nodes": nodes, "edges": edges}


def _state_schema(graph: Any, name: str) -> dict[str, Any] | None:
    from stepgraph.pregel.schemas import schema_json

    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None) if builder is not None else None
    out = schema_json(schema) if schema is not None else graph.get_input_jsonschema()
    if not out:
        return None
    out = dict(out)
    out["properties"] = {k: {**v, "default": None} for k, v in (out.get("properties") or {}).items()}
    out.pop("required", None)
    out["title"] = f"{name}_state"
    return out


def _schemas(graph: Any, name: str) -> dict[str, Any]:
    with engine_errors(422):
        return {
            "input_schema": graph.get_input_jsonschema(),
            "output_schema": graph.get_output_jsonschema(),
            "state_schema": _state_schema(graph, name),
            "config_schema": {},
            "context_schema": graph.get_context_jsonschema(),
        }


async def _graph_of(request: Request, assistant: dict[str, Any]) -> Any:
    ctx = ctx_of(request)
    with engine_errors(422):
        return await ctx.registry.build(assistant["graph_id"], assistant.get("config") or {})


async def _assistant(request: Request, action: str = "read", **value: Any) -> dict[str, Any]:
    """The assistant of the path, after the ``assistants.<action>`` auth handler (404 when not visible)."""
    aid = request.path_params["assistant_id"]
    access = await authorize(request, "assistants", action, {"assistant_id": aid, **value})
    return await ctx_of(request).assistants.get(aid, access)


@operation(body=AssistantCreate, ok=Assistant, errors=(404, 409))
async def create(request: Request, body: AssistantCreate) -> Response:
    """Create an assistant for a registered graph (``if_exists``: raise or do_nothing)."""
    body, access = await authorize_model(request, "assistants", "create", body,
                                         ("assistant_id", "graph_id", "config", "context", "metadata", "if_exists",
                                          "name"))
    return json_response(await ctx_of(request).assistants.create(body, access))


@operation(body=AssistantSearch, ok=list[AssistantFields], errors=(404,), response_headers=PAGINATION)
async def search(request: Request, body: AssistantSearch) -> Response:
    """Assistants matching ``graph_id``/``metadata``/``name``, newest first."""
    body, access = await authorize_model(request, "assistants", "search", body,
                                         ("graph_id", "metadata", "limit", "offset"))
    items, total, offset, limit = await ctx_of(request).assistants.search(body, access)
    return json_response(items, headers=pagination_headers(offset, limit, len(items), total))


@operation(body=AssistantCount, ok=int, errors=(404,))
async def count(request: Request, body: AssistantCount) -> Response:
    """How many assistants match."""
    body, access = await authorize_model(request, "assistants", "search", body, ("graph_id", "metadata"),
                                         limit=0, offset=0)
    return json_response(await ctx_of(request).assistants.count(body, access))


@operation(ok=Assistant, errors=(404,), path_doc=_UUID_ONLY)
async def get(request: Request) -> Response:
    """An assistant by UUID."""
    return json_response(await _assistant(request))


@operation(body=AssistantPatch, ok=Assistant, errors=(404,), path_doc=_UUID_ONLY)
async def patch(request: Request, body: AssistantPatch) -> Response:
    """Change an assistant (a new version)."""
    ctx = ctx_of(request)
    aid = request.path_params["assistant_id"]
    body, access = await authorize_model(request, "assistants", "update", body,
                                         ("graph_id", "config", "context", "metadata", "name"), assistant_id=aid)
    return json_response(await ctx.assistants.patch(aid, body, access))


@operation(query=DeleteAssistantQuery, status=204, errors=(404,), path_doc=_UUID_ONLY)
async def delete(request: Request, query: DeleteAssistantQuery) -> Response:
    """Delete an assistant (``?delete_threads=true`` also deletes the threads it ran on)."""
    ctx = ctx_of(request)
    aid = request.path_params["assistant_id"]
    access = await authorize(request, "assistants", "delete", {"assistant_id": aid})
    await ctx.assistants.delete(aid, access)
    await ctx.crons.delete_for_assistant(aid)
    if query.delete_threads:
        for thread_id in await ctx.threads.ids(metadata={"assistant_id": aid}):
            allowed = await authorize(request, "threads", "delete", {"thread_id": thread_id})
            if await ctx.threads.find(thread_id, allowed) is not None:
                await ctx.service.delete_thread_data(thread_id)
    return no_content()


@operation(query=GraphQuery, ok=GraphJson, errors=(404,))
async def graph(request: Request, query: GraphQuery) -> Response:
    """The drawable graph (``?xray=`` expands subgraphs); a graph id is accepted too."""
    ctx = ctx_of(request)
    ref = request.path_params["assistant_id"]
    access = await authorize(request, "assistants", "read", {"assistant_id": ref})
    assistant = await ctx.assistants.resolve(ref, status=404, access=access)
    compiled = await _graph_of(request, assistant)
    with engine_errors(422):
        return json_response(_graph_json(compiled.get_graph(xray=query.xray)))


@operation(ok=GraphSchema, errors=(404,), path_doc=_UUID_ONLY)
async def schemas(request: Request) -> Response:
    """Input, output, state, config and context JSON schemas of the assistant's graph."""
    assistant = await _assistant(request)
    compiled = await _graph_of(request, assistant)
    return json_response({"graph_id": assistant["graph_id"], **_schemas(compiled, assistant["graph_id"])})


@operation(query=SubgraphsQuery, ok=dict[str, SubgraphSchema], errors=(404,), path_doc=_UUID_ONLY)
async def subgraphs(request: Request, query: SubgraphsQuery) -> Response:
    """Schemas of the subgraphs (``/subgraphs/{namespace}`` for one; ``?recurse=true``)."""
    assistant = await _assistant(request)
    compiled = await _graph_of(request, assistant)
    namespace = request.path_params.get("namespace")
    with engine_errors(404):
        found = list(compiled.get_subgraphs(namespace=namespace, recurse=query.recurse))
    return json_response({name: _schemas(sub, getattr(sub, "name", name) or name) for name, sub in found})


@operation(body=AssistantVersions, ok=list[AssistantVersion], errors=(404,), path_doc=_UUID_ONLY)
async def versions(request: Request, body: AssistantVersions) -> Response:
    """The assistant's versions, newest first (``metadata`` filters on each version's metadata)."""
    aid = request.path_params["assistant_id"]
    access = await authorize(request, "assistants", "read", {"assistant_id": aid})
    found = await ctx_of(request).assistants.versions(
        aid, metadata=body.metadata, limit=body.limit if body.limit is not None else 10,
        offset=body.offset or 0, access=access)
    return json_response(found)


@operation(body=AssistantLatest, ok=Assistant, errors=(404,), path_doc=_UUID_ONLY)
async def set_latest(request: Request, body: AssistantLatest) -> Response:
    """Make a stored version the assistant's current one."""
    aid = request.path_params["assistant_id"]
    access = await authorize(request, "assistants", "update", {"assistant_id": aid, "version": body.version})
    ctx = ctx_of(request)
    if body.version is None:
        return json_response(await ctx.assistants.get(aid, access))
    return json_response(await ctx.assistants.set_latest(aid, body.version, access))


ROUTES = [
    Route("/assistants", create, methods=["POST"]),
    Route("/assistants/search", search, methods=["POST"]),
    Route("/assistants/count", count, methods=["POST"]),
    Route("/assistants/{assistant_id}", get, methods=["GET"]),
    Route("/assistants/{assistant_id}", patch, methods=["PATCH"]),
    Route("/assistants/{assistant_id}", delete, methods=["DELETE"]),
    Route("/assistants/{assistant_id}/graph", graph, methods=["GET"]),
    Route("/assistants/{assistant_id}/schemas", schemas, methods=["GET"]),
    Route("/assistants/{assistant_id}/subgraphs", subgraphs, methods=["GET"]),
    Route("/assistants/{assistant_id}/subgraphs/{namespace:path}", subgraphs, methods=["GET"]),
    Route("/assistants/{assistant_id}/versions", versions, methods=["POST"]),
    Route("/assistants/{assistant_id}/latest", set_latest, methods=["POST"]),
]
