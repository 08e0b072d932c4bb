"""langchain-core messages: LangGraph's representation (optional interop).

This module imports langchain-core at import time, so it is only ever imported lazily, on
the first merge that runs in langchain mode.

Like LangGraph, coercion goes through ``convert_to_messages``, chunks become full messages,
and a message without an id gets a ``uuid4`` id assigned *in place* (the caller's
``BaseMessage`` object is mutated, exactly as LangGraph does).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    BaseMessageChunk,
    RemoveMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_chunk_to_message,
)

from stepgraph.messages._dict import is_remove as _is_remove_dict

__all__ = ["is_remove", "message_id", "normalize", "to_openai_format"]

message_id = attrgetter("id")
"""The id of a normalized message."""


_REMOVES: dict[type, bool] = {}
"""Message classes met before -> whether they are ``RemoveMessage`` (a pydantic class check
costs more than the rest of a merge of one message)."""


def is_remove(message: Any) -> bool:
    """True if ``message`` is langchain-core's ``RemoveMessage``."""
    cls = type(message)
    found = _REMOVES.get(cls)
    if found is None:
        found = isinstance(message, RemoveMessage)
        # (remembered per class only when the class answers for its instances: a mock's
        # ``__class__`` may claim another)
        if len(_REMOVES) < 64 and found == issubclass(cls, RemoveMessage):
            _REMOVES[cls] = found
    return found


def _coerce(message: Any) -> BaseMessage:
    if isinstance(message, dict) and _is_remove_dict(message):
        # stepgraph's RemoveMessage / a remove dict (which need no "content" key).
        mid = message.get("id")
        if mid is None:
            raise ValueError(f"A remove message needs an 'id', got {message!r}")
        return RemoveMessage(id=mid)
    if _convert_one is not None:
        return _convert_one(message)
    return convert_to_messages([message])[0]


try:  # what ``convert_to_messages`` does for each item of a list (without the list)
    from langchain_core.messages.utils import _convert_to_message as _convert_one
except ImportError:  # (a langchain-core without it: the public function, per message)
    _convert_one = None  # type: ignore[assignment]


_PLAIN: set[type] = set()
"""``BaseMessage`` classes met before that are not chunks: such a message is kept as it is."""


def normalize(items: Iterable[Any]) -> tuple[list[BaseMessage], list[str]]:
    """Coerce ``items`` to ``BaseMessage`` objects with ids; return them with their ids."""
    if type(items) is list and set(map(type, items)) <= _PLAIN:
        # The usual history (messages read back or merged before): checked in C-level loops.
        ids = list(map(message_id, items))
        if None not in ids:
            return items.copy(), ids
    msgs: list[BaseMessage] = []
    ids: list[str] = []
    for m in items:
        if type(m) is dict or (type(m) not in _PLAIN and not isinstance(m, BaseMessage)):
            m = _coerce(m)
        if type(m) in _PLAIN:
            pass  # (a class met before, not a chunk: no ABC check)
        elif isinstance(m, BaseMessageChunk):
            m = message_chunk_to_message(m)
        else:
            _PLAIN.add(type(m))
        if m.id is None:
            m.id = str(uuid.uuid4())
        msgs.append(m)
        ids.append(m.id)
    return msgs, ids


def to_openai_format(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``format="langchain-openai"``: contents rewritten to OpenAI block format."""
    return convert_to_messages(convert_to_openai_messages(list(messages)))
