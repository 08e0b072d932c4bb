"""Custom auth as LangGraph's docs show it: bearer token -> user, owner stamped, owner filter.

Used by ``tests/server/test_server_auth.py`` (and the JS check) through ``langgraph.json``.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

auth = Auth()

USERS: dict[str, dict[str, Any]] = {
    "token-alice": {"identity": "alice", "display_name": "Alice", "permissions": ["threads:delete"],
                    "team": "red"},
    "token-bob": {"identity": "bob", "permissions": []},
}


@auth.authenticate
async def authenticate(authorization: str | None, path: str, method: str) -> Auth.types.MinimalUserDict:
    if path == "/teapot":
        raise Auth.exceptions.HTTPException(status_code=418, detail="short and stout",
                                            headers={"x-teapot": "yes"})
    if not authorization or not authorization.startswith("Bearer "):
        raise Auth.exceptions.HTTPException(status_code=401, detail="Missing bearer token",
                                            headers={"WWW-Authenticate": "Bearer"})
    user = USERS.get(authorization.removeprefix("Bearer "))
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")
    return user


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> Auth.types.FilterType:
    """Everything not handled below: stamp the owner on what is created, see only your own."""
    filters = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata.update(filters)
    return filters


@auth.on.threads.delete
async def delete_needs_permission(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> Any:
    if "threads:delete" not in ctx.permissions:
        return False
    return {"owner": ctx.user.identity}


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> Auth.types.FilterType:
    """Your assistants and the system ones (one per graph)."""
    if ctx.action == "create":
        value.setdefault("metadata", {})["owner"] = ctx.user.identity
        return {"owner": ctx.user.identity}
    return {"$or": [{"owner": ctx.user.identity}, {"created_by": "system"}]}


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Store items live under the user's identity."""
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        value["namespace"] = (ctx.user.identity, *namespace)
