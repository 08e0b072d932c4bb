"""Plain-dict messages: the representation that needs no langchain-core.

Canonical shape: ``{"role": "user" | "assistant" | "system" | "tool" | ..., "content": ...,
"id": "<str>"}``. Dicts written in LangChain's ``{"type": "human" | "ai" | ...}`` style are
accepted and kept in that shape. A removal is the dict ``{"type": "remove", "id": ...}`` (or
``"role": "remove"``); :class:`RemoveMessage` builds one.

Copy policy: a caller's dict is never mutated. A dict that already has an ``id`` is kept by
reference (no copy, so the hot path stays cheap); a dict without one is shallow-copied and
the copy gets a fresh ``uuid4`` string id.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, Final, NotRequired, TypedDict

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "MessageDict",
    "RemoveMessage",
    "is_remove",
    "message_id",
    "normalize",
    "to_message_dict",
]

REMOVE_ALL_MESSAGES: Final = "__remove_all__"
"""Id of a removal that wipes every message before it (see ``add_messages``)."""


def message_id(message: dict[str, Any]) -> Any:
    """The id of a normalized message (``None`` if it was taken out of the dict since)."""
    return message.get("id")


class MessageDict(TypedDict, total=False):
    """Shape of a plain-dict message (all keys optional for typing; ``role`` or ``type``
    must be present at runtime)."""

    role: str
    type: str
    content: Any
    id: str
    name: NotRequired[str]
    tool_calls: NotRequired[list[dict[str, Any]]]
    tool_call_id: NotRequired[str]


class RemoveMessage(dict):  # type: ignore[type-arg]
    """A removal marker usable without langchain-core.

    ``RemoveMessage("m1")`` *is* the dict ``{"type": "remove", "id": "m1"}``, so it survives
    any serializer that handles dicts and compares equal to the plain-dict form.
    ``RemoveMessage(REMOVE_ALL_MESSAGES)`` wipes the whole list.
    """

    __slots__ = ()

    def __init__(self, id: str) -> None:
        if not isinstance(id, str) or not id:
            raise ValueError(f"RemoveMessage needs a non-empty string id, got {id!r}")
        super().__init__(type="remove", id=id)

    @property
    def id(self) -> str:
        """The id of the message to remove."""
        return self["id"]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"RemoveMessage(id={self['id']!r})"


_TUPLE_ROLES: Final = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
    "function": "function",
}
"""Roles a ``(role, content)`` tuple may use, mapped to the canonical dict role."""

_LC_TYPE_ROLES: Final = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "function",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "function",
}
"""``BaseMessage.type`` values mapped to dict roles (``chat`` uses the message's own role)."""

_LC_FIELDS: Final = (
    "name",
    "tool_calls",
    "invalid_tool_calls",
    "tool_call_id",
    "artifact",
    "additional_kwargs",
    "response_metadata",
    "usage_metadata",
)
"""Optional ``BaseMessage`` fields copied into the dict when set (non-empty)."""


def new_id() -> str:
    """A fresh message id (``uuid4``; ``uuid`` is imported on the first one)."""
    import uuid

    return str(uuid.uuid4())


def is_remove(message: Any) -> bool:
    """True if ``message`` is a removal: a remove dict or any object whose ``type`` is
    ``"remove"`` (langchain-core's ``RemoveMessage``)."""
    if isinstance(message, dict):
        return message.get("type") == "remove" or message.get("role") == "remove"
    return getattr(message, "type", None) == "remove"


def _from_langchain(message: Any) -> dict[str, Any]:
    """Convert a langchain-core ``BaseMessage`` (or chunk) to a plain dict."""
    mtype = message.type
    if mtype == "remove":
        return RemoveMessage(message.id)
    if mtype in ("chat", "ChatMessageChunk"):
        role = message.role
    else:
        try:
            role = _LC_TYPE_ROLES[mtype]
        except KeyError:
            raise TypeError(f"Cannot convert message of type {mtype!r} to a dict") from None
    out: dict[str, Any] = {"role": role, "content": message.content, "id": message.id}
    for field in _LC_FIELDS:
        value = getattr(message, field, None)
        if value:
            out[field] = value
    if getattr(message, "status", "success") != "success":
        out["status"] = message.status
    if out["id"] is None:
        out["id"] = new_id()
    return out


def _is_langchain_message(message: Any) -> bool:
    # Checked through sys.modules so that stepgraph never imports langchain-core itself: if
    # the module is not loaded, no object can be one of its messages.
    lc = sys.modules.get("langchain_core.messages")
    return lc is not None and isinstance(message, lc.BaseMessage)


def to_message_dict(message: Any) -> dict[str, Any]:
    """Coerce one message-like value to a plain-dict message that has an ``id``.

    Accepts a dict (with ``role`` or ``type``; removals need only ``id``), a string (a user
    message), a ``(role, content)`` 2-tuple, or a langchain-core message. The input is
    never mutated.
    """
    if isinstance(message, dict):
        if message.get("id") is not None:
            if "role" in message or "type" in message:
                return message
        elif is_remove(message):
            raise ValueError(f"A remove message needs an 'id', got {message!r}")
        elif "role" in message or "type" in message:
            return {**message, "id": new_id()}
        raise ValueError(f"Message dict must contain a 'role' or 'type' key, got {message!r}")
    if isinstance(message, str):
        return {"role": "user", "content": message, "id": new_id()}
    if isinstance(message, (tuple, list)):
        if len(message) != 2 or not isinstance(message[0], str):
            raise ValueError(f"A message tuple must be (role, content), got {message!r}")
        role = _TUPLE_ROLES.get(message[0])
        if role is None:
            raise ValueError(
                f"Unknown message role {message[0]!r}; expected one of {sorted(_TUPLE_ROLES)}"
            )
        return {"role": role, "content": message[1], "id": new_id()}
    if _is_langchain_message(message):
        return _from_langchain(message)
    raise TypeError(
        f"Unsupported message type {type(message).__name__}: expected a dict, str, "
        "(role, content) tuple or a langchain-core message"
    )


def normalize(items: Iterable[Any]) -> tuple[list[Any], list[str]]:
    """Coerce ``items`` to dict messages; return them with their ids (parallel lists)."""
    msgs: list[Any] = []
    ids: list[str] = []
    for m in items:
        # Fast path: an already-normalized state message (plain dict with id and role).
        if type(m) is dict and (mid := m.get("id")) is not None and ("role" in m or "type" in m):
            msgs.append(m)
            ids.append(mid)
            continue
        m = to_message_dict(m)
        msgs.append(m)
        ids.append(m["id"])
    return msgs, ids
