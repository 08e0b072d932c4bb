"""The OpenAPI document, derived from the route table and each route's ``@operation``.

Request bodies, query and path parameters and responses come from the same pydantic models
that validate requests (``server.schemas``), so the document cannot drift from what the
server accepts; shared models are components (``#/components/schemas/...``).
"""

from __future__ import annotations

import re
from typing import Any, get_origin

from pydantic import TypeAdapter
from starlette.routing import BaseRoute, Route

from stepgraph.server.endpoint import Operation, spec_of
from stepgraph.server.schemas.common import ErrorBody
from stepgraph.server.schemas.meta import SseEvent
from stepgraph.server.validation import PATH_PARAMS

__all__ = ["build_openapi"]

_TAGS = {"assistants": "Assistants", "threads": "Threads", "runs": "Runs", "store": "Store"}
_REF = "#/components/schemas/{model}"
_STATUS_TEXT = {
    200: "Success", 202: "Accepted", 204: "No content",
    400: "Bad request: values the engine refused, or a malformed HTTP request (e.g. a request "
         "line over the HTTP server's size limit)", 404: "Not found",
    409: "Conflict", 413: "Request body too large", 422: "Invalid request",
}
_HEADER_DOCS = {
    "Location": "Where to reconnect to the run's stream (or join it).",
    "Content-Location": "The run's own path.",
    "X-Pagination-Total": "How many items match in all.",
    "X-Pagination-Next": "The offset of the next page, when there is one.",
}


def _tag(path: str) -> str:
    first = path.strip("/").split("/", 1)[0]
    if first == "threads" and "/runs" in path:
        return "Runs"
    return _TAGS.get(first, "System")


class _Schemas:
    """Collects the types to document, then renders them in one pass (shared components)."""

    def __init__(self) -> None:
        self.inputs: list[tuple[Any, str, TypeAdapter[Any]]] = []
        self.keys: dict[tuple[int, str], Any] = {}

    def want(self, tp: Any, mode: str) -> tuple[int, str]:
        key = (id(tp), mode)
        if key not in self.keys:
            self.keys[key] = tp
            self.inputs.append((key, mode, TypeAdapter(tp)))  # type: ignore[arg-type]
        return key

    def render(self) -> tuple[dict[Any, Any], dict[str, Any]]:
        found, defs = TypeAdapter.json_schemas(self.inputs, ref_template=_REF)  # type: ignore[arg-type]
        return {k[0]: v for k, v in found.items()}, defs.get("$defs", {})


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema without the ``null`` branch (a query string has no null)."""
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        schema.pop("anyOf")
        if len(rest) == 1:
            schema.update(rest[0])
        else:
            schema["anyOf"] = rest
        if schema.get("default", 0) is None:
            schema.pop("default")
    return schema


def _query_params(schema: dict[str, Any], model: Any) -> list[dict[str, Any]]:
    params = []
    required = set(schema.get("required", ()))
    for name, prop in (schema.get("properties") or {}).items():
        prop = _not_null(dict(prop))
        description = prop.pop("description", None)
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required, "schema": prop}
        if description:
            param["description"] = description
        if get_origin(model.model_fields[name].annotation) is list:
            param.update(style="form", explode=True)
        params.append(param)
    return params


def _responses(spec: Operation, rendered: dict[Any, Any], keys: dict[str, Any]) -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": _REF.format(model="ErrorBody")}}}
    ok: dict[str, Any] = {"description": _STATUS_TEXT.get(spec.status, "Success")}
    if "ok" in keys:
        ok["content"] = {spec.media: {"schema": rendered[keys["ok"]]}}
        for media, schema in spec.alt_media:
            ok["content"][media] = {"schema": schema}
    if spec.response_headers:
        ok["headers"] = {name: {"description": text, "schema": {"type": "string"}}
                         for name, text in spec.response_headers}
    out = {str(spec.status): ok}
    for status in spec.empty:
        out[str(status)] = {"description": _STATUS_TEXT.get(status, "Success, no content")}
    statuses = set(spec.errors) | {400, 422}
    if spec.body is not None or spec.body_doc is not None:
        statuses.add(413)
    special = dict(spec.error_models)
    for status in sorted(statuses | set(special)):
        content = error
        if status in special:
            content = {"application/json": {"schema": {"anyOf": [
                rendered[keys[f"error:{status}"]], {"$ref": _REF.format(model="ErrorBody")}]}}}
        if status == 400:  # the HTTP server answers a malformed request in plain text
            content = {**content, "text/plain": {"schema": {"type": "string"}}}
        out[str(status)] = {"description": _STATUS_TEXT.get(status, "Error"), "content": content}
    return out


def _operation(route: Route, method: str, spec: Operation, rendered: dict[Any, Any],
               keys: dict[str, Any]) -> dict[str, Any]:
    doc = (route.endpoint.__doc__ or "").strip()
    summary = doc.splitlines()[0] if doc else route.endpoint.__name__.replace("_", " ")
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": rendered[keys[f"path:{name}"]]}
        for name in re.findall(r"{(\w+)(?::\w+)?}", route.path)
    ]
    if spec.query is not None:
        params += _query_params(rendered[keys["query"]], spec.query)
    params += [{"name": name, "in": "header", "required": False, "description": text,
                "schema": {"type": "string"}} for name, text in spec.headers]
    op: dict[str, Any] = {
        "summary": summary,
        "description": doc,
        "operationId": f"{method.lower()}_" + re.sub(r"\W+", "_", route.path).strip("_"),
        "tags": [_tag(route.path)],
        "parameters": params,
        "responses": _responses(spec, rendered, keys),
    }
    body = spec.body if spec.body is not None else spec.body_doc
    if body is not None:
        schema = rendered[keys["body"]]
        op["requestBody"] = {"required": _requires_body(body),
                             "content": {"application/json": {"schema": schema}}}
    return op


def _requires_body(tp: Any) -> bool:
    fields = getattr(tp, "model_fields", None)
    return bool(fields) and any(f.is_required() for f in fields.values())


_GRAPH_FIELDS = {"RunCreate": "assistant_id", "AssistantCreate": "graph_id", "AssistantPatch": "graph_id",
                 "AssistantSearch": "graph_id", "AssistantCount": "graph_id"}
"""Fields that name a registered graph: the document lists the server's graphs as examples."""


def build_openapi(routes: list[BaseRoute], version: str, *, title: str | None = None,
                  graph_ids: list[str] | None = None) -> dict[str, Any]:
    """An OpenAPI 3.1 document describing ``routes`` (those declared with ``@operation``);
    ``graph_ids`` (the registered graphs) become the examples of the fields naming a graph."""
    schemas = _Schemas()
    schemas.want(ErrorBody, "serialization")
    planned: list[tuple[Route, str, Operation, dict[str, Any]]] = []
    for route in routes:
        spec = spec_of(getattr(route, "endpoint", None))
        if not isinstance(route, Route) or route.methods is None or spec is None:
            continue
        keys: dict[str, Any] = {}
        narrower = dict(spec.path_doc)
        for name in re.findall(r"{(\w+)(?::\w+)?}", route.path):
            keys[f"path:{name}"] = schemas.want(narrower.get(name, PATH_PARAMS.get(name, str)), "validation")
        for status, model in spec.error_models:
            keys[f"error:{status}"] = schemas.want(model, "serialization")
        if spec.query is not None:
            keys["query"] = schemas.want(spec.query, "validation")
        body = spec.body if spec.body is not None else spec.body_doc
        if body is not None:
            keys["body"] = schemas.want(body, "validation")
        ok = SseEvent if spec.media == "text/event-stream" and spec.ok is None else spec.ok
        if ok is not None:
            keys["ok"] = schemas.want(ok, "serialization")
        for method in sorted(route.methods - {"HEAD"}):
            planned.append((route, method, spec, keys))
    rendered, defs = schemas.render()
    for _, _, _spec, keys in planned:  # query models become parameters, not components
        if "query" in keys and "$ref" in rendered[keys["query"]]:
            name = rendered[keys["query"]]["$ref"].rsplit("/", 1)[1]
            rendered[keys["query"]] = defs.get(name) or rendered[keys["query"]]
    for _, _, spec, _ in planned:
        if spec.query is not None:
            defs.pop(spec.query.__name__, None)
    for model, field in _GRAPH_FIELDS.items():
        prop = defs.get(model, {}).get("properties", {}).get(field)
        if prop is not None and graph_ids:
            prop["examples"] = list(graph_ids)
    paths: dict[str, dict[str, Any]] = {}
    for route, method, spec, keys in planned:
        path = re.sub(r"{(\w+):\w+}", r"{\1}", route.path)
        paths.setdefault(path, {})[method.lower()] = _operation(route, method, spec, rendered, keys)
    return {
        "openapi": "3.1.0",
        "info": {"title": title or "stepgraph server (LangGraph Server API)", "version": version},
        "paths": paths,
        "components": {"schemas": defs},
    }
