"""What route handlers call: ``authorize`` (one event, its filter) and the run/store helpers.

Without ``auth`` in the config no request carries a ``RequestAuth`` and every helper is a
no-op, so the routes read the same with and without auth.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from starlette.requests import Request

from stepgraph.server.auth.authorizer import RequestAuth
from stepgraph.server.auth.middleware import SCOPE_KEY
from stepgraph.server.auth.users import from_config
from stepgraph.server.errors import ApiError
from stepgraph.server.schemas.fields import RequestModel, as_dict
from stepgraph.server.storage.filters import AccessFilter, AllOf, MetaEq
from stepgraph.server.validation import validate

__all__ = [
    "AUTH_CONFIG_KEYS",
    "authorize",
    "authorize_model",
    "request_auth",
    "run_auth_configurable",
    "store_filter",
    "with_auth_user",
]

M = TypeVar("M", bound=RequestModel)

AUTH_CONFIG_KEYS = ("langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions")
"""Configurable keys only the server sets (a client's values are dropped)."""


def request_auth(request: Request) -> RequestAuth | None:
    """Who sent ``request`` (``None`` when the server has no auth)."""
    return request.scope.get(SCOPE_KEY)


async def authorize(request: Request, resource: str, action: str, value: Any) -> AccessFilter | None:
    """Run the authorization handler of ``(resource, action)`` on ``value``; its filter.

    403 when the handler refuses; ``None`` when it allows without a filter (or without auth).
    The handler may change ``value`` (e.g. stamp ``value["metadata"]["owner"]``).
    """
    auth = request_auth(request)
    if auth is None:
        return None
    return await auth.check(resource, action, value)


async def authorize_model(request: Request, resource: str, action: str, model: M, keys: tuple[str, ...],
                          **extra: Any) -> tuple[M, AccessFilter | None]:
    """``authorize`` with a value made of the validated body ``model``'s ``keys`` (those the
    client sent, plus ``extra``); the model as the handler left it, and the filter.

    ``metadata`` is always there (``{}`` when the body has none) so a handler can stamp it.
    Whatever the handler set in those keys is validated again as the body's model (422 when
    it no longer is one), so what the resource stores is always of the declared types.
    """
    auth = request_auth(request)
    if auth is None:
        return model, None
    sent = as_dict(model) or {}
    value: dict[str, Any] = {**extra, **copy.deepcopy({k: sent[k] for k in keys if k in sent})}
    if "metadata" in keys and value.get("metadata") is None:
        value["metadata"] = {}
    found = await auth.check(resource, action, value)
    changed = {k: value[k] for k in keys if k in value and value[k] != sent.get(k)}
    if "metadata" in changed and changed["metadata"] == {} and sent.get("metadata") is None:
        del changed["metadata"]  # the empty object put there for the handler, left as it was
    if changed:
        model = validate(type(model), {**sent, **changed})
    return model, found


def run_auth_configurable(auth: RequestAuth | None) -> dict[str, Any]:
    """The configurable keys of a run started by ``auth``'s user (``{}`` without auth)."""
    if auth is None:
        return {}
    user = auth.user
    return {"langgraph_auth_user": user.dict() if hasattr(user, "dict") else {"identity": user.identity},
            "langgraph_auth_user_id": user.identity,
            "langgraph_auth_permissions": list(auth.permissions)}


def with_auth_user(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with its stored ``langgraph_auth_user`` turned back into a user object."""
    configurable = config.get("configurable") or {}
    stored = configurable.get("langgraph_auth_user")
    if stored is None:
        return config
    return {**config, "configurable": {**configurable, "langgraph_auth_user": from_config(stored)}}


def _store_part(flt: AccessFilter) -> dict[str, Any]:
    if isinstance(flt, MetaEq):
        return {flt.key: list(flt.value) if isinstance(flt.value, tuple) else {"$eq": flt.value}}
    if isinstance(flt, AllOf):
        out: dict[str, Any] = {}
        for part in flt.parts:
            for key, cond in _store_part(part).items():
                if key in out and out[key] != cond:
                    raise _NoMatch
                out[key] = cond
        return out
    raise ApiError(500, "Your auth handler returned a store filter with $contains or $or, which the "
                        "store cannot apply (store filters: equality on value fields).")


class _NoMatch(Exception):
    """Two equalities on one field that cannot both hold."""


def store_filter(client: dict[str, Any] | None, access: AccessFilter | None) -> dict[str, Any] | None:
    """The store search filter: the client's and the handler's, both holding.

    ``None`` means nothing can match (the two ask one field for different values).
    """
    if access is None:
        return client or {}
    try:
        extra = _store_part(access)
    except _NoMatch:
        return None
    merged = dict(client or {})
    for key, cond in extra.items():
        if key not in merged:
            merged[key] = cond
            continue
        mine = merged[key]
        ops = mine if isinstance(mine, dict) and any(str(k).startswith("$") for k in mine) else {"$eq": mine}
        if isinstance(cond, dict):
            if "$eq" in ops and ops["$eq"] != cond["$eq"]:
                return None
            merged[key] = {**ops, **cond}
        elif mine != cond:
            return None
    return merged
