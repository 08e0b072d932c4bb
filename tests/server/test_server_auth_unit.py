"""Pieces of ``server/auth`` on their own: the filter language, users, store filters."""

from __future__ import annotations

from typing import Any

import pytest

from stepgraph.runtime import ServerInfo, server_info_from
from stepgraph.server.auth.filters import parse_filter
from stepgraph.server.auth.guard import store_filter, with_auth_user
from stepgraph.server.auth.users import AuthUser, StudioUser, normalize_auth_result
from stepgraph.server.errors import ApiError
from stepgraph.server.storage.filters import AllOf, AnyOf, MetaContains, MetaEq


def test_filter_language() -> None:
    assert parse_filter({}) is None
    assert parse_filter({"owner": "a"}) == MetaEq("owner", "a")
    assert parse_filter({"owner": {"$eq": "a"}}) == MetaEq("owner", "a")
    assert parse_filter({"tags": ["x", 1]}) == MetaEq("tags", ("x", 1))
    assert parse_filter({"m": {"$contains": "u"}}) == MetaContains("m", ("u",))
    assert parse_filter({"m": {"$contains": ["u", "v"]}}) == MetaContains("m", ("u", "v"))
    assert parse_filter({"a": 1, "b": None}) == AllOf((MetaEq("a", 1), MetaEq("b", None)))
    assert parse_filter({"$or": [{"a": 1}, {"b": {"$contains": 2}}], "c": True}) == AllOf((
        AnyOf((MetaEq("a", 1), MetaContains("b", (2,)))), MetaEq("c", True)))
    assert parse_filter({"$and": [{"a": 1}, {"$or": [{"b": 1}, {"c": 1}]}]}) == AllOf((
        MetaEq("a", 1), AnyOf((MetaEq("b", 1), MetaEq("c", 1)))))


@pytest.mark.parametrize("bad,why", [
    ({"owner": {"$ne": "a"}}, "unknown operator '$ne'"),
    ({"$not": {"a": 1}}, "unknown operator '$not'"),
    ({"$or": [{"a": 1}]}, "at least 2"),
    ({"$or": "x"}, "at least 2"),
    ({"owner": {}}, "empty operator object"),
    ({"owner": {"id": 1}}, "unknown operator 'id'"),
    ({"owner": {"$eq": {"x": 1}}}, "must be a string, number"),
    ({"tags": [["nested"]]}, "must be a string, number"),
    ({"$or": [{"$or": [{"$or": [{"a": 1}, {"b": 1}]}, {"c": 1}]}, {"d": 1}]}, "nested more than 2"),
])
def test_filters_outside_the_language_are_refused(bad: dict[str, Any], why: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_filter(bad)
    assert info.value.status == 500 and why in info.value.detail


def test_users() -> None:
    user, perms = normalize_auth_result({"identity": "a", "permissions": ["p"], "team": "red"})
    assert perms == ["p"] and user.identity == "a" and user.display_name == "a" and user.is_authenticated
    assert user["team"] == user.team == user.get("team") == "red" and "team" in user
    assert user.permissions == ["p"] and set(user) >= {"identity", "team", "display_name"}
    assert user.dict() == {"identity": "a", "is_authenticated": True, "display_name": "a", "permissions": ["p"],
                           "team": "red"}
    again = AuthUser(user.dict())
    assert again == user and again.identity == "a"
    with pytest.raises(AttributeError):
        _ = user.missing
    assert normalize_auth_result("b")[0].identity == "b"
    assert normalize_auth_result((["x"], "c"))[1] == ["x"]
    from starlette.authentication import SimpleUser

    starlette_user = normalize_auth_result(SimpleUser("sam"))[0]
    assert starlette_user.identity == "sam" and starlette_user["identity"] == "sam"
    studio = StudioUser("s")
    assert normalize_auth_result(studio)[0] is studio and studio["identity"] == "s"
    for bad in (None, 3, {"name": "no identity"}, ("a", "b", "c"), {"identity": "a", "permissions": "p"}):
        with pytest.raises(ValueError):
            normalize_auth_result(bad)


def test_stored_user_comes_back_as_a_user() -> None:
    config = {"configurable": {"langgraph_auth_user": {"identity": "a", "display_name": "A"}, "x": 1}}
    out = with_auth_user(config)
    user = out["configurable"]["langgraph_auth_user"]
    assert isinstance(user, AuthUser) and user.display_name == "A" and out["configurable"]["x"] == 1
    assert config["configurable"]["langgraph_auth_user"] == {"identity": "a", "display_name": "A"}  # not mutated
    info = server_info_from({**out["configurable"], "graph_id": "g", "assistant_id": "x"})
    assert info == ServerInfo(assistant_id="x", graph_id="g", user=user)
    assert server_info_from({}) is None


def test_store_filters_combine() -> None:
    assert store_filter(None, None) == {}
    assert store_filter({"a": 1}, None) == {"a": 1}
    assert store_filter(None, MetaEq("owner", "u")) == {"owner": {"$eq": "u"}}
    assert store_filter({"kind": "note"}, MetaEq("owner", "u")) == {"kind": "note", "owner": {"$eq": "u"}}
    assert store_filter({"owner": "u"}, MetaEq("owner", "u")) == {"owner": {"$eq": "u"}}
    assert store_filter({"owner": "v"}, MetaEq("owner", "u")) is None
    assert store_filter({"n": {"$gt": 1}}, MetaEq("n", 5)) == {"n": {"$gt": 1, "$eq": 5}}
    assert store_filter(None, AllOf((MetaEq("a", 1), MetaEq("a", 2)))) is None
    with pytest.raises(ApiError):
        store_filter(None, MetaContains("tags", ("x",)))


# --- authorize_model: a handler's changes to a typed body ------------------------------------
class _FakeAuth:
    """A ``RequestAuth`` whose handler is ``handler(value)``."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.seen: list[Any] = []

    async def check(self, resource: str, action: str, value: Any) -> Any:
        self.seen.append((resource, action, dict(value)))
        return self.handler(value)


def _request(auth: Any) -> Any:
    from starlette.requests import Request

    from stepgraph.server.auth.middleware import SCOPE_KEY

    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/", "headers": []}
    if auth is not None:
        scope[SCOPE_KEY] = auth
    return Request(scope)


async def test_authorize_model_applies_and_revalidates_handler_changes() -> None:
    from stepgraph.server.auth.guard import authorize_model
    from stepgraph.server.schemas.threads import ThreadCreate, ThreadSearch

    body = ThreadCreate(thread_id="t1")
    same, access = await authorize_model(_request(None), "threads", "create", body, ("thread_id", "metadata"))
    assert same is body and access is None  # without auth: untouched

    def stamp(value: dict[str, Any]) -> Any:
        value["metadata"]["owner"] = "alice"  # in place, as LangGraph's docs do
        return {"owner": "alice"}

    auth = _FakeAuth(stamp)
    changed, access = await authorize_model(_request(auth), "threads", "create", body, ("thread_id", "metadata"))
    assert auth.seen[0][2]["thread_id"] == "t1" and auth.seen[0][2]["metadata"] == {"owner": "alice"}
    assert isinstance(changed, ThreadCreate) and changed.metadata == {"owner": "alice"} and changed.thread_id == "t1"
    assert body.metadata is None  # the validated original is not mutated
    assert access == {"owner": "alice"}  # what the check answered, passed through

    untouched, _ = await authorize_model(_request(_FakeAuth(lambda v: None)), "threads", "search",
                                         ThreadSearch(limit=5), ("metadata", "limit"))
    assert untouched.metadata is None and untouched.limit == 5  # the {} put there for the handler is not kept

    def break_it(value: dict[str, Any]) -> None:
        value["limit"] = "lots"

    with pytest.raises(ApiError) as info:  # what the handler leaves is held to the body's types
        await authorize_model(_request(_FakeAuth(break_it)), "threads", "search", ThreadSearch(), ("limit",))
    assert info.value.status == 422 and "'limit'" in info.value.detail


def test_search_filters_are_bounded_by_the_model() -> None:
    from stepgraph.server.schemas.threads import ThreadSearch
    from stepgraph.server.validation import validate

    assert validate(ThreadSearch, {"metadata": {"a": list(range(100))}}).metadata == {"a": list(range(100))}
    for body, field in (({"metadata": {"a": list(range(2000))}}, "metadata"),
                        ({"values": {"a": [[[[[1]]]]]}}, "values")):
        with pytest.raises(ApiError) as info:
            validate(ThreadSearch, body)
        assert info.value.status == 422 and info.value.detail.startswith("[SG543]") and f"'{field}'" in info.value.detail
