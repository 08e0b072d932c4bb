"""``auth.openapi``: the security schemes the OpenAPI document shows, as on LangGraph.

``securitySchemes`` (or ``security_schemes``) become ``components.securitySchemes``,
``security`` the document's default requirement, and ``paths`` maps
``{path: {method: requirement}}`` for single operations (a path or method the document
does not have is skipped, as on LangGraph). The public paths (``/ok``, ``/info``,
``/openapi.json``...) are marked as needing no credentials.
"""

from __future__ import annotations

from typing import Any

from stepgraph.server.auth.middleware import PUBLIC_PATHS

__all__ = ["apply_security"]


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
