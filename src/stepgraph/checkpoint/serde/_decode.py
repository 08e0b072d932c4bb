"""The safe decoder: msgpack bytes back to values, resolving names only through the allow-list.

An extension ``[module, name, argument, ...]`` is rebuilt in this order: its payload is
decoded (within the nesting budget), ``(module, name)`` is resolved by ``TypeRegistry.resolve``
(exact names only, see ``types``), the argument is checked (``_allowlist.check_args``: types
and sizes for built-in types), and only then is the class called, in the one way the
extension code says (``cls(arg)``, ``cls(*args)``, ``cls(**kwargs)``, an allowed method, or a
pydantic constructor). Every decoded object whose hash an attacker could choose is recorded,
so no set or dict of a blob can be a hash flood (``DecodeState.track``).

The error of a hook is parked per thread while the msgpack library unwinds (ormsgpack turns
it into a bare ``ValueError``) and re-raised by the caller.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from stepgraph.checkpoint.serde import _limits
from stepgraph.checkpoint.serde._allowlist import check_args, checked_types
from stepgraph.checkpoint.serde._limits import DecodeLimits, DecodeState, limit_error
from stepgraph.checkpoint.serde._scan import ScanError, scan
from stepgraph.checkpoint.serde.base import SG_CORRUPT, SG_NOT_ALLOWED, SerializationError
from stepgraph.checkpoint.serde.types import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_METHOD_SINGLE_ARG,
    EXT_NUMPY_ARRAY,
    EXT_PYDANTIC_V2,
    SerializedException,
    TypeRegistry,
    is_model_class,
    method_allowed,
)

__all__ = ["Decoder", "stash", "take"]

_local = threading.local()

DIRECT_MAX = 1024
"""Objects up to this many bytes are decoded with any map keys at once: the worst hash flood
that fits in them costs a few thousand comparisons. Larger ones are decoded with str keys
only first, and their other keys checked before a second decode (``Decoder._loose``)."""
_LIB_DEPTH = 1025
"""Nesting the msgpack libraries allow inside one object (plus one for the object itself)."""


def stash(exc: BaseException) -> None:
    """Park ``exc`` for the caller of the msgpack library (hooks cannot raise through it)."""
    _local.error = exc


def take() -> BaseException | None:
    """The parked error, if any (and forget it)."""
    err = getattr(_local, "error", None)
    if err is not None:
        _local.error = None
    return err


def reraise(err: BaseException) -> NoReturn:
    err.__suppress_context__ = True
    raise err


def _args_text(arg: Any) -> str:
    if isinstance(arg, list):
        return ", ".join(repr(a) for a in arg)
    return repr(arg)


def _as_key(value: Any) -> Any:
    """A decoded array key as ormsgpack makes it: nested lists become tuples."""
    if type(value) is list:
        return tuple(_as_key(v) for v in value)
    return value


def _clip(text: Any, n: int = 80) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n] + "..."


def _corrupt(message: str) -> SerializationError:
    return SerializationError(f"Corrupt blob: {message}", code=SG_CORRUPT)


def _depth_error(exc: Exception, limits: DecodeLimits) -> SerializationError | None:
    """The SG406 error for a library's own nesting refusal (``None``: another error)."""
    name = type(exc).__name__
    if isinstance(exc, RecursionError) or name == "StackError" or "ecursion limit" in str(exc):
        return limit_error("nesting deeper than the msgpack library allows (1024 levels)",
                           "max_depth", limits.max_depth)
    return None


def _kwargs(arg: Any, what: str) -> dict[str, Any]:
    """A map of keyword arguments (a non-str key makes the call raise TypeError: SG403)."""
    if type(arg) is not dict:
        raise _corrupt(f"{what} needs a map, got {type(arg).__name__}")
    return arg


_MODELS: dict[type, bool] = {}
_CHECKED: dict[Any, Any] = {}
"""The built-in types whose arguments are checked (filled on first use)."""


def _load_checked() -> dict[Any, Any]:
    _CHECKED.update(checked_types())
    return _CHECKED


def _is_model(target: Any) -> bool:
    found = _MODELS.get(target) if isinstance(target, type) else False
    if found is None:
        found = _MODELS[target] = is_model_class(target)
    return bool(found)


class Decoder:
    """Decoding half of ``MsgpackCodec`` (which sets the attributes named here)."""

    __slots__ = ()
    registry: TypeRegistry
    limits: DecodeLimits
    _unpackb: Callable[[Any], Any]
    _unpack_str_keys: Callable[[Any], Any] | None
    _dataclasses: dict[type, tuple[frozenset[str], frozenset[str], bool]]

    def loads(self, data: bytes) -> Any:
        """Rebuild a value from msgpack bytes made by ``dumps`` (or by LangGraph)."""
        current, top = _limits.enter(self.limits)
        try:
            return self._unpack(data, current)
        finally:
            if top:
                _limits.leave()
                take()

    def _unpack(self, data: Any, current: DecodeState) -> Any:
        """Decode one msgpack object within the nesting budget.

        An object is charged an upper bound of its nesting (its size, at most the library's
        1024 levels) while that fits the budget. When it does not, its bytes are walked
        (objects inside included) and its real depth is charged; only if that still does
        not fit is the whole blob walked once, from the top: the blob is refused exactly
        when its real nesting exceeds ``max_depth``. A measured object is not checked again
        inside, so no byte is walked twice on the way down.
        """
        if current.verified or current.blob_verified:
            return self._library_unpack(data, current)
        limits = current.limits
        charge = min(len(data), _LIB_DEPTH)
        top = not current.frames
        if not top and current.depth + charge > limits.max_depth:
            charge = self._measure(data, limits.max_depth - current.depth) + 1
            if current.depth + charge > limits.max_depth:
                self._verify_blob(current)
                return self._verified_unpack(data, current)
            return self._verified_unpack(data, current)
        current.depth += charge
        current.frames.append(data)
        try:
            return self._library_unpack(data, current)
        finally:
            current.frames.pop()
            current.depth -= charge

    def _verified_unpack(self, data: Any, current: DecodeState) -> Any:
        current.verified = True
        try:
            return self._library_unpack(data, current)
        finally:
            current.verified = False

    @staticmethod
    def _measure(data: Any, room: int) -> int:
        """The nesting of ``data``, objects inside included (past ``room``: more than it)."""
        try:
            return scan(bytes(data), room, into_objects=True).depth
        except ScanError as exc:
            raise _corrupt(str(exc)) from None

    def _verify_blob(self, current: DecodeState) -> None:
        """The upper bounds charged so far do not fit: measure the whole blob; refuse it
        only if its real nesting exceeds the limit (else nothing more needs checking)."""
        limits = current.limits
        depth = self._measure(current.frames[0], limits.max_depth)
        if depth > limits.max_depth:
            raise limit_error(f"nesting of more than {limits.max_depth} levels", "max_depth",
                              limits.max_depth)
        current.blob_verified = True

    def _library_unpack(self, data: Any, current: DecodeState) -> Any:
        strict = self._unpack_str_keys
        try:
            if strict is None or len(data) <= DIRECT_MAX:
                return self._unpackb(data)
            patterns = current.pattern_chars
            try:
                return strict(data)
            except ValueError as exc:
                err = take()
                if err is not None:
                    reraise(err)
                if "invalid type" not in str(exc):
                    raise
            current.pattern_chars = patterns  # the objects are decoded again
            return self._loose(data, current)
        except SerializationError:
            take()
            raise
        except Exception as exc:
            err = take() or _depth_error(exc, current.limits)
            if err is not None:
                reraise(err)
            raise _corrupt(f"msgpack data: {exc}") from exc
        except BaseException:
            take()
            raise

    def _loose(self, data: Any, current: DecodeState) -> Any:
        """Decode an object with non-str map keys, after checking its array keys' hashes."""
        try:
            found = scan(bytes(data), current.limits.max_depth)
        except ScanError as exc:
            raise _corrupt(str(exc)) from None
        view = memoryview(data)
        for start, end in found.array_keys:
            current.track(_as_key(self._unpackb(view[start:end])))
        return self._unpackb(data)

    def _ext_hook(self, code: int, data: bytes) -> Any:
        current = _limits.state()
        try:
            if current is None:  # a library call outside ``loads``: never expected
                raise _corrupt("extension decoded outside a decode")
            current.objects += 1
            try:
                if current.objects > current.limits.max_object_depth:
                    raise limit_error(f"objects nested {current.objects} deep",
                                      "max_object_depth", current.limits.max_object_depth)
                obj = self._decode_ext(code, data, current)
            finally:
                current.objects -= 1
            if type(obj).__hash__ is not None:  # (messages and models are unhashable)
                current.track(obj)
            return obj
        except BaseException as exc:
            stash(exc)
            raise

    def _decode_ext(self, code: int, data: bytes, current: DecodeState) -> Any:
        if code == EXT_NUMPY_ARRAY or not 0 <= code <= EXT_PYDANTIC_V2:
            what = "a numpy array" if code == EXT_NUMPY_ARRAY else f"extension type {code}"
            raise SerializationError(
                f"Cannot deserialize {what}: stepgraph's serializer does not support it.",
                code=SG_CORRUPT,
            )
        tup = self._unpack(data, current)
        if type(tup) is not list or len(tup) < 3:
            raise SerializationError(f"Corrupt extension payload (code {code}).", code=SG_CORRUPT)
        module, name, arg = tup[0], tup[1], tup[2]
        target = self.registry.resolve(module, name)
        if target in (_CHECKED or _load_checked()):
            check_args(target, code, arg, current.limits)
        try:
            return self._build(code, target, arg, tup)
        except SerializationError:
            raise
        except RecursionError:
            raise limit_error(f"rebuilding {_clip(module)}.{_clip(name)} nests deeper than "
                              "Python's recursion limit", "max_depth",
                              current.limits.max_depth) from None
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
            if type(arg) is not list:
                raise _corrupt(f"positional arguments must be an array, got {type(arg).__name__}")
            return target(*arg)
        if code == EXT_CONSTRUCTOR_KW_ARGS:
            kwargs = _kwargs(arg, "keyword arguments")
            if isinstance(target, type) and dataclasses.is_dataclass(target):
                return self._build_dataclass(target, kwargs)
            return target(**kwargs)
        if code == EXT_METHOD_SINGLE_ARG:
            method = tup[3] if len(tup) > 3 else None
            if not method_allowed(target, method):
                raise SerializationError(
                    f"Refusing to call method {str(method)[:80]!r} of "
                    f"{getattr(target, '__qualname__', '?')} named in the blob.",
                    code=SG_NOT_ALLOWED,
                    hint="a blob may only call fromisoformat on datetime types and the "
                    "construction methods of allowed pydantic models",
                )
            return getattr(target, method)(arg)
        if not _is_model(target):
            raise _corrupt(f"{getattr(target, '__qualname__', target)!r} is not a pydantic model")
        kwargs = _kwargs(arg, "model fields")
        method = "model_construct" if code == EXT_PYDANTIC_V2 else "construct"
        if len(tup) > 3 and tup[3] == method:  # written by stepgraph: exact field values
            fields_set = tup[4] if len(tup) > 4 else None
            if fields_set is not None and type(fields_set) is not list:
                raise _corrupt("a model's fields_set must be an array")
            return getattr(target, method)(
                _fields_set=None if fields_set is None else set(fields_set), **kwargs
            )
        try:  # written by LangGraph: model_dump() output, so validate it
            return target(**kwargs)
        except Exception:
            return getattr(target, method)(**kwargs)

    def _build_dataclass(self, cls: type, kwargs: dict[str, Any]) -> Any:
        """``cls(**init_fields)``, then restore ``init=False`` fields as they were saved."""
        info = self._dataclasses.get(cls)
        if info is None:
            fields = dataclasses.fields(cls)  # type: ignore[arg-type]
            names = frozenset(f.name for f in fields)
            later = frozenset(f.name for f in fields if not f.init)
            info = self._dataclasses[cls] = (names, later, cls.__dataclass_params__.init)  # type: ignore[attr-defined]
        names, later, generated = info
        unknown = kwargs.keys() - names
        if unknown:
            raise SerializationError(
                f"Could not rebuild {cls.__qualname__}: the blob has fields it does not "
                f"declare ({', '.join(sorted(map(repr, unknown))[:5])[:200]}).",
                code=SG_CORRUPT,
                hint="the class may have changed since the value was saved",
            )
        if not generated:  # user-written __init__: restore the declared fields directly
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
