"""The authenticated user, as authorization handlers and graphs see it.

An ``@auth.authenticate`` handler may return a string (the identity), a dict with an
``identity`` (plus ``permissions``, ``display_name``, ``is_authenticated`` and anything
else), an object with an ``identity`` attribute, or a ``(permissions, user)`` pair — as on
LangGraph's server. ``AuthUser`` presents any of them through ``langgraph_sdk``'s
``BaseUser`` protocol: attributes (``user.identity``) and mapping access
(``user["identity"]``, ``user.get(...)``, iteration over its keys). A run stores the user
as ``user.dict()`` in its config and the executor turns it back into an ``AuthUser``
(``from_config``), so nodes read ``config["configurable"]["langgraph_auth_user"]`` the same
way handlers read ``ctx.user``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["AuthUser", "StudioUser", "normalize_auth_result"]

_CORE = ("identity", "is_authenticated", "display_name")


def _identity_of(obj: Any) -> Any:
    """``obj.identity`` (Starlette's ``BaseUser`` raises ``NotImplementedError`` there: then
    its ``display_name``, as LangGraph's server does)."""
    try:
        return getattr(obj, "identity", None)
    except NotImplementedError:
        try:
            return getattr(obj, "display_name", None)
        except NotImplementedError:
            return None


class AuthUser:
    """A user wrapping a mapping or an object that has an ``identity``."""

    __slots__ = ("_data", "_obj")

    def __init__(self, source: Any) -> None:
        if isinstance(source, Mapping):
            if not isinstance(source.get("identity"), str):
                raise ValueError("the user dict needs a string 'identity'")
            self._data: dict[str, Any] | None = dict(source)
            self._obj: Any = None
        else:
            if not isinstance(_identity_of(source), str):
                raise ValueError(f"{type(source).__name__} has no string 'identity'")
            self._data, self._obj = None, source

    # -- the BaseUser protocol --------------------------------------------------------------
    @property
    def identity(self) -> str:
        return self._data["identity"] if self._data is not None else _identity_of(self._obj)

    @property
    def is_authenticated(self) -> bool:
        return bool(self._field("is_authenticated", True))

    @property
    def display_name(self) -> str:
        return self._field("display_name", None) or self.identity

    @property
    def permissions(self) -> Sequence[str]:
        return list(self._field("permissions", None) or [])

    def _field(self, name: str, default: Any) -> Any:
        if self._data is not None:
            return self._data.get(name, default)
        return getattr(self._obj, name, default)

    # -- mapping access ---------------------------------------------------------------------
    def dict(self) -> dict[str, Any]:
        """The user as plain data (what a run stores in its config)."""
        extra: dict[str, Any] = {}
        if self._data is not None:
            extra = self._data
        else:
            for name in ("model_dump", "dict"):
                fn = getattr(self._obj, name, None)
                if callable(fn):
                    dumped = fn()
                    if isinstance(dumped, Mapping):
                        extra = dict(dumped)
                        break
        return {"identity": self.identity, "is_authenticated": self.is_authenticated,
                "display_name": self.display_name, **{k: v for k, v in extra.items() if k not in _CORE}}

    model_dump = dict

    def __getitem__(self, key: str) -> Any:
        return self.dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.dict().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.dict()

    def __iter__(self) -> Iterator[str]:
        return iter(self.dict())

    def __len__(self) -> int:
        return len(self.dict())

    def keys(self) -> Any:
        return self.dict().keys()

    def values(self) -> Any:
        return self.dict().values()

    def items(self) -> Any:
        return self.dict().items()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        data = object.__getattribute__(self, "_data")
        if data is not None:
            if name in data:
                return data[name]
            raise AttributeError(f"the user has no {name!r}")
        return getattr(object.__getattribute__(self, "_obj"), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AuthUser):
            return self.dict() == other.dict()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AuthUser(identity={self.identity!r})"


def _studio_base() -> type:
    from langgraph_sdk.auth.types import StudioUser as Base

    return Base


class StudioUser(_studio_base()):  # type: ignore[misc]
    """``langgraph_sdk``'s ``StudioUser`` with mapping access (``isinstance`` checks hold)."""

    def dict(self) -> dict[str, Any]:
        return {"kind": "StudioUser", "identity": self.identity, "is_authenticated": self.is_authenticated,
                "display_name": self.display_name, "permissions": list(self.permissions)}

    def __getitem__(self, key: str) -> Any:
        return self.dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.dict().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.dict()

    def __iter__(self) -> Iterator[str]:
        return iter(self.dict())


def normalize_auth_result(result: Any) -> tuple[Any, list[str]]:
    """``(user, permissions)`` from what an ``@auth.authenticate`` handler returned.

    Raises ``ValueError`` (naming what was returned) for anything that is not a user.
    """
    if isinstance(result, tuple):
        if len(result) != 2:
            raise ValueError(f"expected a (permissions, user) pair, got a tuple of {len(result)}")
        permissions, user = result
    elif isinstance(result, Mapping):
        permissions, user = result.get("permissions"), result
    else:
        try:
            permissions = getattr(result, "permissions", None)
        except NotImplementedError:
            permissions = None
        user = result
    if isinstance(user, str):
        user = AuthUser({"identity": user})
    elif isinstance(user, StudioUser):
        pass
    elif isinstance(user, Mapping) or _identity_of(user) is not None:
        user = AuthUser(user)
    else:
        raise ValueError(f"expected a user (a string identity, a dict with 'identity' or an object with an "
                         f"'identity' attribute), got {type(user).__name__}")
    if permissions is None:
        permissions = []
    if isinstance(permissions, str) or not all(isinstance(p, str) for p in permissions):
        raise ValueError("permissions must be a list of strings")
    return user, list(permissions)


def from_config(value: Any) -> Any:
    """The user stored in a run's config (``user.dict()``), as an ``AuthUser`` again."""
    if isinstance(value, Mapping) and isinstance(value.get("identity"), str):
        return AuthUser(value)
    return value
