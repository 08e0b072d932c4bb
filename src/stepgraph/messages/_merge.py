"""The id-keyed merge behind ``add_messages`` and the rule that picks a representation.

Representation rule (deterministic, decided per call from ``format`` and the environment):

* ``format="dict"``: plain dicts, always. langchain-core messages in the input are
  converted to dicts.
* ``format=None`` (default): if langchain-core is importable (checked once, lazily, with
  ``importlib.util.find_spec``), LangGraph's behaviour: everything is coerced to
  ``BaseMessage``. Otherwise plain dicts.
* ``format="langchain-openai"``: LangGraph's behaviour plus OpenAI-format contents; needs
  langchain-core (``ImportError`` otherwise).
* Any other format: ``ValueError``.

Cost: appending k messages to n is O(n + k): one pass to index ``left`` by id, one pass
over ``right``, and a filter pass only when something was removed.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from functools import cache
from types import ModuleType
from typing import Any, Final

from stepgraph.messages import _dict
from stepgraph.messages._dict import REMOVE_ALL_MESSAGES

__all__ = ["FORMATS", "check_format", "langchain_available", "merge_messages", "prepare"]

FORMATS: Final = (None, "langchain-openai", "dict")
"""Accepted values of ``add_messages(format=...)``."""


@cache
def langchain_available() -> bool:
    """Whether langchain-core can be imported (checked once, without importing it)."""
    try:
        return importlib.util.find_spec("langchain_core") is not None
    except (ImportError, ValueError):
        return False


def check_format(format: str | None) -> None:
    """Raise ``ValueError`` for an unknown format, ``ImportError`` if it needs langchain."""
    if format not in FORMATS:
        raise ValueError(
            f"Unrecognized {format=}. Expected one of 'langchain-openai', 'dict', None."
        )
    if format == "langchain-openai" and not langchain_available():
        raise ImportError(
            "add_messages(format='langchain-openai') needs langchain-core: "
            "pip install 'stepgraph[langchain]' (or use format='dict' for plain dicts)."
        )


def _backend(format: str | None) -> ModuleType:
    if format == "dict" or (format is None and not langchain_available()):
        return _dict
    # lazy: langchain-core
    from stepgraph.messages import _lc

    return _lc


def prepare(format: str | None) -> None:
    """Load what merges in ``format`` use (langchain-core in langchain mode) now: a compiled
    graph calls this for its message reducers, so its first step does not pay the import
    (LangGraph pays it when its message module is imported)."""
    check_format(format)
    _backend(format)


def merge_messages(left: Any, right: Any, format: str | None = None) -> list[Any]:
    """Merge ``right`` into ``left`` by message id (see ``stepgraph.graph.add_messages``)."""
    check_format(format)
    backend = _backend(format)

    if not isinstance(left, list):
        left = [left]
    given = right
    if not isinstance(right, list):
        right = [right]
    again = _repeat(left, given, right, backend)
    if again is not None:
        return _openai(again) if format == "langchain-openai" else again
    r_msgs, r_ids = backend.normalize(right)
    r_removes = [backend.is_remove(m) for m in r_msgs]

    # A remove-all marker wipes everything before it (the last marker wins): what follows
    # it in ``right`` is merged into an empty list.
    cut = None
    for i, (mid, rm) in enumerate(zip(r_ids, r_removes, strict=True)):
        if rm and mid == REMOVE_ALL_MESSAGES:
            cut = i
    if cut is not None:
        merged = _merge([], [], r_msgs[cut + 1 :], r_ids[cut + 1 :], r_removes[cut + 1 :])[:2]
    else:
        known = _known_ids(left, backend)
        if known is None:
            (l_msgs, l_ids), l_index = backend.normalize(left), None
        else:
            l_msgs, (l_ids, l_index) = left, known
        merged, merged_ids, index = _merge(l_msgs, l_ids, r_msgs, r_ids, r_removes, l_index)
        _remember(merged, merged_ids, backend, index)
        if len(right) == len(r_msgs) and all(map(_has_id, right)):
            _DONE[(id(left), id(given))] = (
                left,
                len(left),
                left[-1] if left else None,
                given,
                tuple(right),
                backend,
                merged,
                merged_ids,
                index,
            )
            while len(_DONE) > _DONE_MAX:
                try:
                    _DONE.popitem(last=False)
                except KeyError:  # another thread emptied it
                    break
        return _openai(merged) if format == "langchain-openai" else merged

    merged = merged[0]
    return _openai(merged) if format == "langchain-openai" else merged


def _openai(merged: list[Any]) -> list[Any]:
    # lazy: langchain-core
    from stepgraph.messages import _lc

    return _lc.to_openai_format(merged)


# Merge results already hold normalized messages with ids: a reducer channel passes the last
# result back as ``left`` on the next merge, so remembering its ids makes each merge cost
# the new messages, not a re-normalization of the whole history. Entries are keyed by list
# identity and checked by length and last element, so a list changed since is normalized.
_Known = tuple[list[Any], int, Any, list[str], ModuleType, dict[str, int] | None]
_KNOWN: OrderedDict[int, _Known] = OrderedDict()
_KNOWN_MAX = 16
"""Lists remembered (each entry keeps its list, and so its messages, alive): a few cover a
run's reducer chain; a run that loaded its list from a checkpoint has a fresh list anyway."""


def _known_ids(
    left: list[Any], backend: ModuleType
) -> tuple[list[str], dict[str, int] | None] | None:
    """The ids of a list this module returned (and its id -> position index), if unchanged."""
    entry = _KNOWN.get(id(left))
    if entry is None:
        return None
    ref, length, last, ids, kind, index = entry
    if (
        ref is not left
        or len(left) != length
        or kind is not backend
        or (left and left[-1] is not last)
    ):
        return None
    return ids, index


def _remember(
    merged: list[Any], ids: list[str], backend: ModuleType, index: dict[str, int] | None
) -> None:
    _KNOWN[id(merged)] = (merged, len(merged), merged[-1] if merged else None, ids, backend, index)
    while len(_KNOWN) > _KNOWN_MAX:
        try:
            _KNOWN.popitem(last=False)
        except KeyError:  # another thread emptied it
            break


# The same merge asked for again: a router's fresh read merges a node's new messages into a
# copy of the channel, then the step's update merges the same write into the same value.
# When every message of ``right`` came with an id (nothing random was made), the result is
# the earlier one, as a new list (same message objects, as for messages written as objects).
_Done = tuple[
    list[Any],
    int,
    Any,
    list[Any],
    tuple[Any, ...],
    ModuleType,
    list[Any],
    list[str],
    dict[str, int] | None,
]
_DONE: OrderedDict[tuple[int, int], _Done] = OrderedDict()
_DONE_MAX = 8


def _has_id(message: Any) -> bool:
    if isinstance(message, dict):
        return message.get("id") is not None
    return getattr(message, "id", None) is not None


def _repeat(left: list[Any], given: Any, right: list[Any], backend: ModuleType) -> list[Any] | None:
    """The result of a merge of these very values (unchanged since) made before, else None
    (``given`` is ``right`` as passed, ``right`` it as a list)."""
    entry = _DONE.get((id(left), id(given)))
    if entry is None:
        return None
    l_ref, l_len, l_last, r_ref, r_items, kind, merged, ids, index = entry
    if (
        l_ref is not left
        or r_ref is not given
        or kind is not backend
        or len(left) != l_len
        or (left and left[-1] is not l_last)
        or len(right) != len(r_items)
        or not all(map(_same, right, r_items))
    ):
        return None
    again = merged.copy()
    _remember(again, ids, backend, index)
    return again


def _same(a: Any, b: Any) -> bool:
    return a is b


def _merge(
    l_msgs: list[Any],
    l_ids: list[str],
    r_msgs: list[Any],
    r_ids: list[str],
    r_removes: list[bool],
    l_index: dict[str, int] | None = None,
) -> tuple[list[Any], list[str], dict[str, int] | None]:
    """``(merged, their ids, id -> position)``; the index is ``None`` when ids repeat or
    something was removed (the next merge indexes again)."""
    merged = l_msgs.copy()
    merged_ids = l_ids.copy()
    if l_index is not None:
        index = l_index.copy()
    else:
        index = {mid: i for i, mid in enumerate(l_ids)}  # (a repeated id: its last position)
    removed: set[str] = set()
    for msg, mid, rm in zip(r_msgs, r_ids, r_removes, strict=True):
        pos = index.get(mid)
        if pos is None:
            if rm:
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{mid}')"
                )
            index[mid] = len(merged)
            merged.append(msg)
            merged_ids.append(mid)
        elif rm:
            removed.add(mid)
        else:
            # Re-adding an id removed earlier in ``right`` brings it back, in its old slot.
            removed.discard(mid)
            merged[pos] = msg
    if removed:
        keep = [i for i, mid in enumerate(merged_ids) if mid not in removed]
        return [merged[i] for i in keep], [merged_ids[i] for i in keep], None
    return merged, merged_ids, index if len(index) == len(merged_ids) else None
