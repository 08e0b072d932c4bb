"""msgpack encoding with extension types for every non-JSON value, and the safe decoder.

Plain data (dict with str keys, list, str, int, float, bool, None, bytes) is packed by the
msgpack library without calling back into Python. Every other value reaches ``_default``,
which finds its handler by exact type (one dict lookup; a class seen for the first time is
classified once and cached) and emits an extension ``[module, name, argument, ...]``.

Decoding resolves ``(module, name)`` through the ``TypeRegistry`` *before* anything is
called; see ``stepgraph.checkpoint.serde.types`` for the allow-list.

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
import threading
from collections.abc import Callable
from enum import Enum
from typing import Any, NoReturn

from stepgraph.checkpoint.serde import _handlers as h
from stepgraph.checkpoint.serde._backend import Backend, OrmsgpackBackend, get_backend
from stepgraph.checkpoint.serde.base import (
    SG_CORRUPT,
    SG_NOT_ALLOWED,
    SG_UNSERIALIZABLE,
    SerializationError,
)
from stepgraph.checkpoint.serde.types import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_METHOD_SINGLE_ARG,
    EXT_NUMPY_ARRAY,
    EXT_PYDANTIC_V2,
    SAFE_METHODS,
    SerializedException,
    TypeRegistry,
)

__all__ = ["MsgpackCodec"]

Handler = Callable[["MsgpackCodec", Any], Any]

# ormsgpack swallows exceptions raised in hooks and raises a bare TypeError/ValueError; the hook
# parks the real error here (per thread) and the caller re-raises it.
_local = threading.local()


def _stash(exc: BaseException) -> None:
    _local.error = exc


def _take() -> BaseException | None:
    err = getattr(_local, "error", None)
    if err is not None:
        _local.error = None
    return err


def _reraise(err: BaseException) -> NoReturn:
    err.__suppress_context__ = True
    raise err


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _too_deep() -> SerializationError:
    return SerializationError(
        "Cannot serialize a value nested more than 255 levels deep (or containing itself).",
        code=SG_UNSERIALIZABLE,
        hint="flatten the structure before storing it in the state",
    )


def _args_text(arg: Any) -> str:
    if isinstance(arg, list):
        return ", ".join(repr(a) for a in arg)
    return repr(arg)


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


class MsgpackCodec:
    """Packs and unpacks values; one per serializer (it caches per-class handlers)."""

    __slots__ = (
        "registry",
        "auto_register",
        "backend",
        "_ext",
        "_packb",
        "_unpackb",
        "_handlers",
        "_dataclasses",
    )

    def __init__(
        self,
        registry: TypeRegistry,
        *,
        auto_register: bool = True,
        backend: Backend | str | None = None,
    ) -> None:
        self.registry = registry
        self.auto_register = auto_register
        self.backend = impl = backend if isinstance(backend, Backend) else get_backend(backend)
        self._ext = impl.ext
        self._packb, self._unpackb = self._bind(impl)
        self._handlers: dict[type, Handler] = dict(h.static_handlers())
        self._dataclasses: dict[type, tuple[frozenset[str], bool]] = {}

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

    # ------------------------------------------------------------------ decoding

    def loads(self, data: bytes) -> Any:
        """Rebuild a value from msgpack bytes made by ``dumps`` (or by LangGraph)."""
        return self._unpack(data)

    def _unpack(self, data: Any) -> Any:
        try:
            return self._unpackb(data)
        except SerializationError:
            _take()
            raise
        except Exception as exc:
            err = _take()
            if err is not None:
                _reraise(err)
            if isinstance(exc, RecursionError):
                raise SerializationError("Blob nested too deeply.", code=SG_CORRUPT) from None
            raise SerializationError(f"Corrupt msgpack data: {exc}", code=SG_CORRUPT) from exc
        except BaseException:
            _take()
            raise

    def _ext_hook(self, code: int, data: bytes) -> Any:
        try:
            return self._decode_ext(code, data)
        except BaseException as exc:
            _stash(exc)
            raise

    def _decode_ext(self, code: int, data: bytes) -> Any:
        if code == EXT_NUMPY_ARRAY or not 0 <= code <= EXT_PYDANTIC_V2:
            what = "a numpy array" if code == EXT_NUMPY_ARRAY else f"extension type {code}"
            raise SerializationError(
                f"Cannot deserialize {what}: stepgraph's serializer does not support it.",
                code=SG_CORRUPT,
            )
        tup = self._unpack(data)
        if type(tup) is not list or len(tup) < 3:
            raise SerializationError(f"Corrupt extension payload (code {code}).", code=SG_CORRUPT)
        module, name, arg = tup[0], tup[1], tup[2]
        target = self.registry.resolve(module, name)
        try:
            return self._build(code, target, arg, tup)
        except SerializationError:
            raise
        except Exception as exc:
            if isinstance(target, type) and issubclass(target, BaseException):
                return SerializedException(f"{module}.{name}", f"{name}({_args_text(arg)})")
            raise SerializationError(
                f"Could not rebuild {module}.{name} from the checkpoint: {exc!r}",
                code=SG_CORRUPT,
                hint="the class may have changed since the value was saved; keep its "
                "constructor compatible or register a codec with a decoder",
            ) from exc

    def _build(self, code: int, target: Any, arg: Any, tup: list[Any]) -> Any:
        if code == EXT_CONSTRUCTOR_SINGLE_ARG:
            if self.registry.has_codecs and isinstance(target, type):
                codec = self.registry.codec_for(target)
                if codec is not None and codec[1] is not None:
                    return codec[1](arg)
            return target(arg)
        if code == EXT_CONSTRUCTOR_POS_ARGS:
            return target(*arg)
        if code == EXT_CONSTRUCTOR_KW_ARGS:
            if isinstance(target, type) and dataclasses.is_dataclass(target):
                return self._build_dataclass(target, arg)
            return target(**arg)
        if code == EXT_METHOD_SINGLE_ARG:
            method = tup[3] if len(tup) > 3 else None
            if type(method) is not str or method not in SAFE_METHODS:
                raise SerializationError(
                    f"Refusing to call method {method!r} named in the blob.",
                    code=SG_NOT_ALLOWED,
                    hint=f"only {sorted(SAFE_METHODS)} may be called",
                )
            return getattr(target, method)(arg)
        method = "model_construct" if code == EXT_PYDANTIC_V2 else "construct"
        if len(tup) > 3 and tup[3] == method:  # written by stepgraph: exact field values
            fields_set = tup[4] if len(tup) > 4 else None
            return getattr(target, method)(
                _fields_set=None if fields_set is None else set(fields_set), **arg
            )
        try:  # written by LangGraph: model_dump() output, so validate it
            return target(**arg)
        except Exception:
            return getattr(target, method)(**arg)

    def _build_dataclass(self, cls: type, kwargs: dict[str, Any]) -> Any:
        """``cls(**init_fields)``, then restore ``init=False`` fields as they were saved."""
        info = self._dataclasses.get(cls)
        if info is None:
            later = frozenset(f.name for f in dataclasses.fields(cls) if not f.init)
            info = self._dataclasses[cls] = (later, cls.__dataclass_params__.init)
        later, generated = info
        if not generated:  # user-written __init__: restore the fields directly
            obj = cls.__new__(cls)
            for key, value in kwargs.items():
                object.__setattr__(obj, key, value)
            return obj
        if not later or later.isdisjoint(kwargs):
            return cls(**kwargs)
        obj = cls(**{k: v for k, v in kwargs.items() if k not in later})
        for key in later.intersection(kwargs):
            object.__setattr__(obj, key, kwargs[key])
        return obj
