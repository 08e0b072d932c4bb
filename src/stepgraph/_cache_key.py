"""``CachePolicy``'s default key: a digest of the node input (bottom layer, no stepgraph imports)."""

from __future__ import annotations

import hashlib
from typing import Any


def _freeze(value: Any, depth: int = 0) -> Any:
    if depth > 10:
        return value
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v, depth + 1) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(_freeze(v, depth + 1) for v in value))
    return value


def default_cache_key(*args: Any, **kwargs: Any) -> str:
    """A stable key for a node input: pickled after freezing dicts and sequences."""
    import pickle  # only graphs with a CachePolicy use it

    frozen = (_freeze(args), _freeze(kwargs)) if kwargs else _freeze(args[0] if len(args) == 1 else args)
    return hashlib.blake2b(pickle.dumps(frozen, protocol=5), digest_size=16).hexdigest()
