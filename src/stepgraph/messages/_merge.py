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

Cost: appending k messages to a list this module returned is O(k) plus one copy of the
list: the id -> position index of a merge result is kept and shared along the chain of
results built from it (see ``_Index``); a list seen for the first time is indexed once, and
a filter pass runs only when something was removed.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from operator import is_
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


_LC: ModuleType | None = None


def _backend(format: str | None) -> ModuleType:
    if format == "dict" or (format is None and not langchain_available()):
        return _dict
    global _LC
    if _LC is None:
        # lazy: langchain-core
        from stepgraph.messages import _lc

        _LC = _lc
    return _LC


def prepare(format: str | None) -> None:
    """Load what merges in ``format`` use (langchain-core in langchain mode) now: a compiled
    graph calls this for its message reducers, so its first step does not pay the import
    (LangGraph pays it when its message module is imported)."""
    check_format(format)
    _backend(format)


def merge_messages(left: Any, right: Any, format: str | None = None) -> list[Any]:
    """Merge ``right`` into ``left`` by message id (see ``stepgraph.graph.add_messages``)."""
    if format is not None:
        check_format(format)
    backend = _backend(format)
    if not isinstance(left, list):
        left = [left]
    given = right
    if not isinstance(right, list):
        right = [right]
    entry = _DONE.get((id(left), id(given)))
    merged = None if entry is None else _repeat(entry, left, given, right, backend)
    if merged is None:
        merged = _merge_new(left, given, right, backend)
    return _openai(merged) if format == "langchain-openai" else merged


def _merge_new(left: list[Any], given: Any, right: list[Any], backend: ModuleType) -> list[Any]:
    r_msgs, r_ids = backend.normalize(right)
    is_remove = backend.is_remove
    r_removes = [is_remove(m) for m in r_msgs]
    # A remove-all marker wipes everything before it (the last marker wins): what follows
    # it in ``right`` is merged into an empty list.
    cut = None
    if True in r_removes:
        for i, (mid, rm) in enumerate(zip(r_ids, r_removes, strict=True)):
            if rm and mid == REMOVE_ALL_MESSAGES:
                cut = i
    if cut is not None:
        return _merge(
            [],
            {},
            False,
            r_msgs[cut + 1 :],
            r_ids[cut + 1 :],
            r_removes[cut + 1 :],
            backend.message_id,
        )[0]
    index = _known_index(left, backend)
    if index is None:
        l_msgs, l_ids = backend.normalize(left)
        index = dict(zip(l_ids, range(len(l_ids)), strict=True))  # (a repeated id: its last)
        unique = len(index) == len(l_ids)
        merged, index = _merge(l_msgs, index, False, r_msgs, r_ids, r_removes, backend.message_id)
        if not unique:
            index = None  # the next merge indexes again
    else:
        merged, index = _merge(left, index, True, r_msgs, r_ids, r_removes, backend.message_id)
    if index is not None:
        _remember(merged, backend, index)
    if all(map(_has_id, right)):
        _DONE[(id(left), id(given))] = (
            left,
            len(left),
            left[-1] if left else None,
            given,
            tuple(right),
            backend,
            merged,
            index,
        )
        if len(_DONE) > _DONE_MAX:
            try:
                _DONE.popitem(last=False)
            except KeyError:  # another thread emptied it
                pass
    return merged


def _openai(merged: list[Any]) -> list[Any]:
    # lazy: langchain-core
    from stepgraph.messages import _lc

    return _lc.to_openai_format(merged)


# Merge results hold normalized messages with ids: a reducer channel passes the last result
# back as ``left`` on the next merge, so remembering its id -> position index makes each
# merge cost the new messages, not a re-normalization of the whole history. Entries are
# keyed by list identity and checked by length and last element, so a list changed since is
# normalized again.
#
# One index is shared by a chain of results (a result built by appends and replacements
# keeps every position of its ``left``), so it is never copied: a merge adds the ids it
# appends. Other lists built from the same ancestor (a router's fresh read, a retried step)
# add theirs too, so an entry is trusted only once checked against the list (the message at
# that position has that id), and an id another list already put elsewhere makes the merge
# continue on a private copy. Invariant: every id of a remembered list maps to its position
# in that list's index; entries for other ids may point anywhere.
_Known = tuple[list[Any], int, Any, ModuleType, dict[Any, int]]
_KNOWN: OrderedDict[int, _Known] = OrderedDict()
_KNOWN_MAX = 4
"""Lists remembered (each entry keeps its list, and so its messages, alive): a few cover a
run's reducer chain; a run that loaded its list from a checkpoint has a fresh list anyway.
Few: each entry of a long chat pins a whole copy of its history (every load makes one),
which a full garbage collection then walks; indexing a list again is cheap."""


def _known_index(left: list[Any], backend: ModuleType) -> dict[Any, int] | None:
    """The id -> position index of a list this module returned, if it is unchanged."""
    entry = _KNOWN.get(id(left))
    if entry is None:
        return None
    ref, length, last, kind, index = entry
    if (
        ref is not left
        or len(left) != length
        or kind is not backend
        or (left and left[-1] is not last)
    ):
        return None
    return index


def _remember(merged: list[Any], backend: ModuleType, index: dict[Any, int]) -> None:
    _KNOWN[id(merged)] = (merged, len(merged), merged[-1] if merged else None, backend, index)
    if len(_KNOWN) > _KNOWN_MAX:
        try:
            _KNOWN.popitem(last=False)
        except KeyError:  # another thread emptied it
            pass


# The same merge asked for again: a router's fresh read merges a node's new messages into a
# copy of the channel, then the step's update merges the same write into the same value.
# When every message of ``right`` came with an id (nothing random was made), the result is
# the earlier one, as a new list (same message objects, as for messages written as objects).
_Done = tuple[
    list[Any], int, Any, Any, tuple[Any, ...], ModuleType, list[Any], dict[Any, int] | None
]
_DONE: OrderedDict[tuple[int, int], _Done] = OrderedDict()
_DONE_MAX = 4


def _has_id(message: Any) -> bool:
    if isinstance(message, dict):
        return message.get("id") is not None
    return getattr(message, "id", None) is not None


def _repeat(
    entry: _Done, left: list[Any], given: Any, right: list[Any], backend: ModuleType
) -> list[Any] | None:
    """The result of a merge of these very values (unchanged since) made before, else None
    (``entry`` is ``_DONE``'s for their ids, ``given`` is ``right`` as passed, ``right`` it
    as a list)."""
    l_ref, l_len, l_last, r_ref, r_items, kind, merged, index = entry
    if (
        l_ref is not left
        or r_ref is not given
        or kind is not backend
        or len(left) != l_len
        or (left and left[-1] is not l_last)
        or len(right) != len(r_items)
        or not all(map(is_, right, r_items))
    ):
        return None
    again = merged.copy()
    if index is not None:
        _remember(again, backend, index)
    return again


def _merge(
    l_msgs: list[Any],
    index: dict[Any, int],
    shared: bool,
    r_msgs: list[Any],
    r_ids: list[Any],
    r_removes: list[bool],
    message_id: Callable[[Any], Any],
) -> tuple[list[Any], dict[Any, int] | None]:
    """``(merged, its id -> position index)``; the index is ``None`` when something was
    removed (the next merge indexes again). ``index`` is ``l_msgs``'s; ``shared``: other
    lists use it too (see above), else this merge owns it."""
    merged = l_msgs.copy()
    removed: set[Any] = set()
    for msg, mid, rm in zip(r_msgs, r_ids, r_removes, strict=True):
        pos = index.get(mid)
        if pos is not None and (pos >= len(merged) or message_id(merged[pos]) != mid):
            pos = None  # another list's entry: the id is not in this one
        if pos is None:
            if rm:
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{mid}')"
                )
            end = len(merged)
            if not shared:
                index[mid] = end
            elif index.setdefault(mid, end) != end:  # (atomic: another thread may add too)
                index = index.copy()  # another list has this id elsewhere: go private
                index[mid] = end
                shared = False
            merged.append(msg)
        elif rm:
            removed.add(mid)
        else:
            # Re-adding an id removed earlier in ``right`` brings it back, in its old slot.
            removed.discard(mid)
            merged[pos] = msg
    if removed:
        return [m for m in merged if message_id(m) not in removed], None
    return merged, index
