"""What the loop asks its driver to do: the effects ``RunLoop`` methods return.

``RunLoop`` never performs I/O. Its methods (``first``, ``tick``, ``task_done``,
``after_tick``, ``finish``) return a sequence of effects, usually empty, and the driver
performs them in order, sync or async (``engine/driver_sync.py``, ``driver_async.py``),
the way ``checkpoint/_flows.py`` hands SQL statements to ``drive``/``adrive``:

* ``Save``: saver calls (``put``/``put_writes`` ops, ``engine/saving.py``) to store under
  the run's durability (``engine/durability.py``);
* ``Emit``: stream parts of the loop's namespace for the run's ``StreamSink``;
* ``CacheGet``: look up ``CachePolicy`` keys; the driver hands what it found to
  ``then``, whose effects it performs next;
* ``CacheSet``: remember successful results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Op = tuple[Any, ...]
"""One saver call: ``("put", config, checkpoint, metadata, new_versions)`` or
``("put_writes", config, writes, task_id, task_path)``."""


class Save:
    """Store ``ops`` (in order) under the run's durability policy."""

    __slots__ = ("ops",)

    def __init__(self, ops: list[Op]) -> None:
        self.ops = ops

    def __repr__(self) -> str:
        return f"Save({[op[0] for op in self.ops]})"


class Emit:
    """Stream ``parts`` (``(mode, payload)`` pairs) in namespace ``ns``."""

    __slots__ = ("ns", "parts")

    def __init__(self, ns: tuple[str, ...], parts: Sequence[tuple[str, Any]]) -> None:
        self.ns = ns
        self.parts = parts

    def __repr__(self) -> str:
        return f"Emit({[mode for mode, _ in self.parts]})"


class CacheGet:
    """Look ``keys`` up in ``cache``; the driver then performs ``then(found)``."""

    __slots__ = ("cache", "keys", "then")

    def __init__(
        self, cache: Any, keys: list[Any], then: Callable[[Mapping[Any, Any]], Effects]
    ) -> None:
        self.cache = cache
        self.keys = keys
        self.then = then

    def __repr__(self) -> str:
        return f"CacheGet({len(self.keys)} keys)"


class CacheSet:
    """Store ``entries`` (``key -> (value, ttl)``) in ``cache``."""

    __slots__ = ("cache", "entries")

    def __init__(self, cache: Any, entries: dict[Any, tuple[Any, int | None]]) -> None:
        self.cache = cache
        self.entries = entries

    def __repr__(self) -> str:
        return f"CacheSet({len(self.entries)} keys)"


Effect = Save | Emit | CacheGet | CacheSet
Effects = Sequence[Effect]

NONE: Effects = ()
"""No effect (shared, so the common case allocates nothing)."""

__all__ = ["NONE", "CacheGet", "CacheSet", "Effect", "Effects", "Emit", "Op", "Save"]
