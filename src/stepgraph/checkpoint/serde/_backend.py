"""The msgpack library under the serializer: ormsgpack if installed, else ``msgpack``.

Both produce the same bytes for the same value: plain data is packed natively, every other type
goes through the ``default`` hook (tuples and subclasses of builtins included), and dicts whose
keys are not all plain scalars are rewritten by the codec before packing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from stepgraph.checkpoint.serde.base import SG_BACKEND_MISSING, SerializationError

__all__ = ["Backend", "get_backend"]

Default = Callable[[Any], Any]
ExtHook = Callable[[int, bytes], Any]


class Backend:
    """One msgpack implementation, reduced to what the codec needs."""

    name: str
    ext: Callable[[int, bytes], Any]
    prepare_always: bool
    """True when the library packs odd dict keys silently, so the codec must rewrite first."""

    def pack(self, obj: Any, default: Default, non_str_keys: bool = False) -> bytes:
        raise NotImplementedError

    def unpack(self, data: bytes, ext_hook: ExtHook) -> Any:
        raise NotImplementedError


class OrmsgpackBackend(Backend):
    """ormsgpack (Rust): the fast path; strict about dict keys unless told otherwise."""

    name = "ormsgpack"
    prepare_always = False

    def __init__(self) -> None:
        import ormsgpack

        self.ext = ormsgpack.Ext
        self._packb = ormsgpack.packb
        self._unpackb = ormsgpack.unpackb
        self._opts = (
            ormsgpack.OPT_PASSTHROUGH_BIG_INT
            | ormsgpack.OPT_PASSTHROUGH_DATACLASS
            | ormsgpack.OPT_PASSTHROUGH_DATETIME
            | ormsgpack.OPT_PASSTHROUGH_ENUM
            | ormsgpack.OPT_PASSTHROUGH_SUBCLASS
            | ormsgpack.OPT_PASSTHROUGH_TUPLE
            | ormsgpack.OPT_PASSTHROUGH_UUID
        )
        self._keys_opts = self._opts | ormsgpack.OPT_NON_STR_KEYS
        self._unpack_opts = ormsgpack.OPT_NON_STR_KEYS

    def pack(self, obj: Any, default: Default, non_str_keys: bool = False) -> bytes:
        opts = self._keys_opts if non_str_keys else self._opts
        return self._packb(obj, default=default, option=opts)

    def unpack(self, data: bytes, ext_hook: ExtHook) -> Any:
        return self._unpackb(data, ext_hook=ext_hook, option=self._unpack_opts)

    def bind(self, default: Default) -> Callable[[Any], bytes]:
        """``pack`` with ``default`` and the strict options bound (the hot path)."""
        return functools.partial(self._packb, default=default, option=self._opts)

    def bind_unpack(self, ext_hook: ExtHook) -> Callable[[Any], Any]:
        """``unpack`` with ``ext_hook`` bound."""
        return functools.partial(self._unpackb, ext_hook=ext_hook, option=self._unpack_opts)

    def bind_unpack_str_keys(self, ext_hook: ExtHook) -> Callable[[Any], Any]:
        """``unpack`` that accepts only str map keys (raises ``ValueError`` at any other key).

        ormsgpack builds maps natively, turning array keys into tuples without calling back
        into Python, so the codec tries this first and checks other keys before allowing them.
        """
        return functools.partial(self._unpackb, ext_hook=ext_hook)


class MsgpackBackend(Backend):
    """msgpack-python: the fallback when ormsgpack is not installed."""

    name = "msgpack"
    prepare_always = True

    def __init__(self) -> None:
        import msgpack

        self.ext = msgpack.ExtType
        self._packb = msgpack.packb
        self._unpackb = msgpack.unpackb

    def pack(self, obj: Any, default: Default, non_str_keys: bool = False) -> bytes:
        return self._packb(
            obj, default=default, use_bin_type=True, strict_types=True, datetime=False
        )

    def unpack(self, data: bytes, ext_hook: ExtHook) -> Any:
        return self._unpackb(data, ext_hook=ext_hook, raw=False, strict_map_key=False, timestamp=0)


_BACKENDS: dict[str, type[Backend]] = {"ormsgpack": OrmsgpackBackend, "msgpack": MsgpackBackend}
_cached: dict[str, Backend] = {}


def get_backend(name: str | None = None) -> Backend:
    """The named backend, or the best installed one (``STEPGRAPH_MSGPACK`` may name it)."""
    names = [name] if name else [os.environ.get("STEPGRAPH_MSGPACK") or "ormsgpack", "msgpack"]
    errors = []
    for candidate in names:
        if candidate in _cached:
            return _cached[candidate]
        factory = _BACKENDS.get(candidate)
        if factory is None:
            raise SerializationError(
                f"Unknown msgpack backend {candidate!r}.",
                code=SG_BACKEND_MISSING,
                hint="use 'ormsgpack' or 'msgpack'",
            )
        try:
            backend = factory()
        except ImportError as exc:
            errors.append(str(exc))
            continue
        _cached[candidate] = backend
        return backend
    raise SerializationError(
        f"No msgpack library is installed ({'; '.join(errors)}).",
        code=SG_BACKEND_MISSING,
        hint="pip install 'stepgraph[serde]' (ormsgpack), or pip install msgpack",
    )
