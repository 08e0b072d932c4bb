"""``auth.openapi``: the security schemes the OpenAPI document shows, as on LangGraph.

``securitySchemes`` (or ``security_schemes``) become ``components.securitySchemes``,
``security`` the document's default requirement, and ``paths`` maps
``{path: {method: requirement}}`` for single operations (a path or method the document
does not have is skipped, as on LangGraph). The public paths (``/ok``, ``/info``,
``/openapi.json``...) are marked as needing no credentials.

``apply_auth`` also documents what auth adds to every other operation's answers: 401 (the
``@auth.authenticate`` handler refused the request) and 403 (an ``@auth.on`` handler refused
the operation), and 404 on the operations that answer it only because a resource exists but
the user may not see it (``AUTH_NOT_FOUND``).
"""

from __future__ import annotations

from typing import Any

from stepgraph.server.auth.middleware import PUBLIC_PATHS

__all__ = ["AUTH_NOT_FOUND", "apply_auth", "apply_security"]

AUTH_NOT_FOUND = frozenset({
    ("post", "/threads/prune"), ("post", "/runs"), ("post", "/runs/stream"), ("post", "/runs/wait"),
    ("post", "/runs/batch"), ("post", "/threads/{thread_id}/stream/events"),
})
"""Operations that answer 404 only under auth, for a resource the user may not see (a run's
thread or assistant, a thread to prune, a thread's v3 event stream, which otherwise opens
before the thread exists); the others already document 404."""

_AUTH_STATUSES = {
    "401": "Not authenticated: the auth handler refused the request's credentials (its status and "
           "detail; 401 unless the handler raised another)",
    "403": "Forbidden: an authorization handler refused this operation",
    "404": "Not found, or not visible to the authenticated user",
}


def apply_auth(doc: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
    """``doc`` of a server with auth: the statuses auth adds, then ``apply_security``."""
    for path, ops in (doc.get("paths") or {}).items():
        if path in PUBLIC_PATHS:
            continue
        for method, op in ops.items():
            responses = op.setdefault("responses", {})
            wanted = ["401", "403"] + (["404"] if (method, path) in AUTH_NOT_FOUND else [])
            for status in wanted:
                if status not in responses:
                    responses[status] = {"description": _AUTH_STATUSES[status],
                                         "content": {"application/json": {"schema": {
                                             "$ref": "#/components/schemas/ErrorBody"}}}}
            op["responses"] = dict(sorted(responses.items()))
    return apply_security(doc, config)


def apply_security(doc: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
    """``doc`` with the security of ``config`` (``auth.openapi``) applied in place."""
    if not config:
        return doc
    schemes = config.get("securitySchemes", config.get("security_schemes"))
    if schemes:
        doc.setdefault("components", {})["securitySchemes"] = schemes
    if config.get("security") is not None:
        doc["security"] = config["security"]
        for path in PUBLIC_PATHS:
            for op in (doc.get("paths", {}).get(path) or {}).values():
                op["security"] = []
    for path, methods in (config.get("paths") or {}).items():
        ops = doc.get("paths", {}).get(path)
        if not ops:
            continue
        for method, requirement in methods.items():
            if method.lower() in ops:
                ops[method.lower()]["security"] = requirement
    return doc
