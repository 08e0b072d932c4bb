"""msgpack encoding with extension types for every non-JSON value, and the safe decoder.

Plain data (dict with str keys, list, str, int, float, bool, None, bytes) is packed by the
msgpack library without calling back into Python. Every other value reaches ``_default``,
which finds its handler by exact type (one dict lookup; a class seen for the first time is
classified once and cached) and emits an extension ``[module, name, argument, ...]``.

Decoding (``_decode``) resolves ``(module, name)`` through the ``TypeRegistry`` *before*
anything is called; see ``stepgraph.checkpoint.serde.types`` for the allow-list and
``_limits`` for what a blob may cost.

Known losses (documented, not silent failures): a ``bytearray``/``memoryview`` *nested* in a
value comes back as ``bytes`` (a top-level bytearray keeps its type); subclasses of str, int,
float, bytes, list, dict and of the stdlib value types come back as their base type unless the
class is registered with a codec; ``defaultdict`` comes back as ``dict``; a datetime whose
tzinfo is neither ``timezone`` nor ``ZoneInfo`` keeps its UTC offset but not its tzinfo class;
pydantic private attributes are reset to their defaults; exception tracebacks, causes and
notes are dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any

from stepgraph.checkpoint.serde import _handlers as h
from stepgraph.checkpoint.serde._backend import Backend, OrmsgpackBackend, get_backend
from stepgraph.checkpoint.serde._decode import Decoder, reraise, stash, take
from stepgraph.checkpoint.serde._limits import DEFAULT_LIMITS, DecodeLimits
from stepgraph.checkpoint.serde.base import SG_UNSERIALIZABLE, SerializationError
from stepgraph.checkpoint.serde.types import TypeRegistry

__all__ = ["MsgpackCodec"]

Handler = Callable[["MsgpackCodec", Any], Any]

_stash, _take, _reraise = stash, take, reraise


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _too_deep() -> SerializationError:
    return SerializationError(
        "Cannot serialize a value nested more than 255 levels deep (or containing itself).",
        code=SG_UNSERIALIZABLE,
        hint="flatten the structure before storing it in the state",
    )


def _needs_rewrite(exc: Exception) -> bool:
    message = str(exc)
    return "Dict key" in message or "surrogate" in message


def _packing_error(exc: Exception) -> SerializationError:
    """The error for a failed pack whose hook parked nothing."""
    message = str(exc)
    # The hook always parks its error; none parked means Python's recursion limit was hit
    # while handling it (a value containing itself).
    if isinstance(exc, RecursionError) or "ecursion" in message or "not msgpack" in message:
        return _too_deep()
    err = SerializationError(f"Cannot serialize value: {message}", code=SG_UNSERIALIZABLE)
    err.__cause__ = exc
    return err


class MsgpackCodec(Decoder):
    """Packs and unpacks values; one per serializer (it caches per-class handlers)."""

    __slots__ = (
        "registry",
        "auto_register",
        "backend",
        "limits",
        "_ext",
        "_packb",
        "_unpackb",
        "_unpack_str_keys",
        "_handlers",
        "_dataclasses",
    )

    def __init__(
        self,
        registry: TypeRegistry,
        *,
        auto_register: bool = True,
        backend: Backend | str | None = None,
        limits: DecodeLimits | None = None,
    ) -> None:
        self.registry = registry
        self.auto_register = auto_register
        self.limits = limits if limits is not None else DEFAULT_LIMITS
        self.backend = impl = backend if isinstance(backend, Backend) else get_backend(backend)
        self._ext = impl.ext
        self._packb, self._unpackb = self._bind(impl)
        self._unpack_str_keys = (
            impl.bind_unpack_str_keys(self._ext_hook) if isinstance(impl, OrmsgpackBackend) else None
        )
        self._handlers: dict[type, Handler] = dict(h.static_handlers())
        self._dataclasses: dict[type, tuple[frozenset[str], frozenset[str], bool]] = {}

    def _bind(self, impl: Backend) -> tuple[Callable[[Any], bytes], Callable[[Any], Any]]:
        """The pack/unpack callables with this codec's hooks bound (the hot path)."""
        if isinstance(impl, OrmsgpackBackend):
            return impl.bind(self._default), impl.bind_unpack(self._ext_hook)
        if impl.prepare_always:
            return (
                lambda obj: impl.pack(h.prepare(obj), self._default, True),
                lambda data: impl.unpack(data, self._ext_hook),
            )
        return (
            lambda obj: impl.pack(obj, self._default),
            lambda data: impl.unpack(data, self._ext_hook),
        )

    def forget(self, cls: type) -> None:
        """Drop the cached handler of ``cls`` (after a codec was registered for it)."""
        if cls not in h.static_handlers():
            self._handlers.pop(cls, None)

    # ------------------------------------------------------------------ encoding

    def dumps(self, obj: Any) -> bytes:
        """Serialize ``obj`` to msgpack bytes."""
        return self.pack(obj)

    def ext(self, code: int, payload: list[Any]) -> Any:
        """An extension object whose data is ``payload`` packed with this codec."""
        return self._ext(code, self.pack(payload))

    def pack(self, obj: Any) -> bytes:
        try:
            return self._packb(obj)
        except Exception as exc:
            err = _take()
            if err is None and _needs_rewrite(exc):
                return self._pack_slow(obj)
            _reraise(err or _packing_error(exc))

    def _pack_slow(self, obj: Any) -> bytes:
        """Rewrite odd dict keys and lone surrogates, then pack (rare path)."""
        try:
            return self.backend.pack(h.prepare(obj), self._default, True)
        except Exception as exc:
            _reraise(_take() or _packing_error(exc))

    def _default(self, obj: Any) -> Any:
        try:
            cls = type(obj)
            handler = self._handlers.get(cls)
            if handler is None:
                handler = self._classify(cls)
            return handler(self, obj)
        except SerializationError as exc:
            _stash(exc)
            raise
        except RecursionError:
            err = _too_deep()
            _stash(err)
            raise err from None
        except Exception as exc:
            err = SerializationError(
                f"Cannot serialize {_type_name(type(obj))}: {exc!r}", code=SG_UNSERIALIZABLE
            )
            err.__cause__ = exc
            _stash(err)
            raise err from exc
        except BaseException as exc:
            _stash(exc)
            raise

    def _classify(self, cls: type) -> Handler:
        handler = self._find_handler(cls)
        self._handlers[cls] = handler
        return handler

    def _find_handler(self, cls: type) -> Handler:
        codec = self.registry.codec_for(cls)
        if codec is not None and codec[0] is not None:
            return h.custom_handler(cls, codec[0])
        if issubclass(cls, Enum):
            handler = h.enum_handler(cls)
        elif hasattr(cls, "__pydantic_fields__") and hasattr(cls, "model_construct"):
            handler = h.pydantic_v2_handler(cls)
        elif hasattr(cls, "__fields_set__") and hasattr(cls, "construct"):
            handler = h.pydantic_v1_handler(cls)
        elif dataclasses.is_dataclass(cls):
            handler = h.dataclass_handler(cls)
        elif issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_asdict"):
            handler = h.namedtuple_handler(cls)
        elif issubclass(cls, BaseException):
            return h.exception_handler
        elif cls.__module__ == "stepgraph.types" and cls.__qualname__ == "Send":
            return h.send_handler
        else:
            return h.subclass_handler(cls) or h.unsupported_handler
        if self.auto_register:
            self.registry.register(cls)
        return handler
