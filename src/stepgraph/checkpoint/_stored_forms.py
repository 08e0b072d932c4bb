"""Shorter stored forms of serializer types and task paths in the SQL savers' rows.

Each ``stored_*``/``short_*`` function has an exact inverse; ids and versions have theirs in
``_ids``.
"""

from __future__ import annotations

from stepgraph.checkpoint._codec import PIECED
from stepgraph.checkpoint._concat import MSGPACK

__all__ = ["loaded_type", "long_path", "short_path", "stored_type"]

_STORED_TYPES = {MSGPACK: "", PIECED: "p"}
"""Serializer types stored shorter: plain msgpack as ``""``, split msgpack as ``"p"``."""
_LOADED_TYPES = {v: k for k, v in _STORED_TYPES.items()}


def stored_type(typ: str) -> str:
    """The short form of a serializer type in rows (``""`` for msgpack)."""
    return _STORED_TYPES.get(typ, typ)


def loaded_type(stored: str) -> str:
    """The serializer type a stored type stands for."""
    return _LOADED_TYPES.get(stored, stored)


_PATH_PREFIXES = ("~__pregel_pull, ", "~__pregel_push, ")
"""Task path prefixes stored as one control character (``\x01``, ``\x02``) in write rows."""


def short_path(path: str) -> str:
    """A task path as stored in a write row (``long_path`` restores it)."""
    for code, prefix in enumerate(_PATH_PREFIXES, 1):
        if path.startswith(prefix):
            return chr(code) + path[len(prefix) :]
    if path and path[0] <= chr(len(_PATH_PREFIXES)):
        return "\x00" + path  # escaped: it starts with a code character itself
    return path


def long_path(stored: str) -> str:
    """The task path a stored one stands for."""
    if not stored or stored[0] > chr(len(_PATH_PREFIXES)):
        return stored
    code = ord(stored[0])
    return stored[1:] if code == 0 else _PATH_PREFIXES[code - 1] + stored[1:]
