"""The OpenAPI document, generated from the route table and the handlers' docstrings."""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import BaseRoute, Route

__all__ = ["build_openapi"]

_TAGS = {"assistants": "Assistants", "threads": "Threads", "runs": "Runs", "store": "Store"}
_OBJ = {"type": "object", "additionalProperties": True}

SCHEMAS: dict[str, Any] = {
    "Assistant": {"type": "object", "properties": {k: {} for k in (
        "assistant_id", "graph_id", "config", "context", "metadata", "name", "description",
        "version", "created_at", "updated_at")}},
    "Thread": {"type": "object", "properties": {k: {} for k in (
        "thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status", "config",
        "values", "interrupts", "error")}},
    "Run": {"type": "object", "properties": {k: {} for k in (
        "run_id", "thread_id", "assistant_id", "metadata", "status", "kwargs", "multitask_strategy",
        "created_at", "updated_at")}},
    "ThreadState": {"type": "object", "properties": {k: {} for k in (
        "values", "next", "tasks", "metadata", "created_at", "checkpoint", "parent_checkpoint",
        "interrupts", "checkpoint_id", "parent_checkpoint_id")}},
    "Error": {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]},
}


def _tag(path: str) -> str:
    first = path.strip("/").split("/", 1)[0]
    if first == "threads" and "/runs" in path:
        return "Runs"
    return _TAGS.get(first, "System")


def _operation(route: Route, method: str) -> dict[str, Any]:
    doc = (route.endpoint.__doc__ or "").strip()
    summary = doc.splitlines()[0] if doc else route.endpoint.__name__.replace("_", " ")
    params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)(?::\w+)?}", route.path)
    ]
    op: dict[str, Any] = {
        "summary": summary,
        "description": doc,
        "operationId": f"{method.lower()}_" + re.sub(r"\W+", "_", route.path).strip("_"),
        "tags": [_tag(route.path)],
        "parameters": params,
        "responses": {
            "200": {"description": "Success", "content": {"application/json": {"schema": {}}}},
            "404": {"description": "Not found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
            "422": {"description": "Invalid request", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    }
    if method in ("POST", "PUT", "PATCH"):
        op["requestBody"] = {"required": False, "content": {"application/json": {"schema": _OBJ}}}
    if route.path.endswith(("/stream", "/stream/events")):
        op["responses"]["200"] = {"description": "Server-sent events", "content": {"text/event-stream": {}}}
    return op


def build_openapi(routes: list[BaseRoute], version: str) -> dict[str, Any]:
    """An OpenAPI 3.1 document describing ``routes``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if not isinstance(route, Route) or route.methods is None:
            continue
        path = re.sub(r"{(\w+):\w+}", r"{\1}", route.path)
        for method in sorted(route.methods - {"HEAD"}):
            paths.setdefault(path, {})[method.lower()] = _operation(route, method)
    return {
        "openapi": "3.1.0",
        "info": {"title": "stepgraph server (LangGraph Server API)", "version": version},
        "paths": paths,
        "components": {"schemas": SCHEMAS},
    }
