"""Per-type encoders: each turns one value into a msgpack extension ``[module, name, arg, ...]``.

Names written here are the ones ``TypeRegistry`` resolves on the way back, and the layouts are
LangGraph's (so LangGraph can read most of them, and we read LangGraph's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepgraph.checkpoint.serde import types as _t
from stepgraph.checkpoint.serde.base import SG_UNSERIALIZABLE, SerializationError
from stepgraph.checkpoint.serde.types import SerializedException

if TYPE_CHECKING:
    from stepgraph.checkpoint.serde._codec import MsgpackCodec

Handler = Callable[["MsgpackCodec", Any], Any]

SINGLE = _t.EXT_CONSTRUCTOR_SINGLE_ARG
POS = _t.EXT_CONSTRUCTOR_POS_ARGS
KW = _t.EXT_CONSTRUCTOR_KW_ARGS
METHOD = _t.EXT_METHOD_SINGLE_ARG

_TYPES = "stepgraph.checkpoint.serde.types"


# ---------------------------------------------------------------- rewriting (rare path)


class _Pairs:
    """A dict whose keys msgpack cannot carry natively; sent as a list of ``[key, value]``."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[list[Any]]) -> None:
        self.pairs = pairs


class _Surrogates:
    """A str with lone surrogates (not valid UTF-8); sent as surrogatepass bytes."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _native_key(key: Any) -> bool:
    t = type(key)
    if t is str:
        return key.isascii() or not _has_surrogates(key)
    if t is int:
        return -(1 << 63) <= key < (1 << 64)
    return t is float or t is bool or key is None or t is bytes


def prepare(obj: Any) -> Any:
    """Copy plain containers, turning odd-keyed dicts and surrogate strings into markers."""
    t = type(obj)
    if t is dict:
        if all(_native_key(k) for k in obj):
            return {k: prepare(v) for k, v in obj.items()}
        return _Pairs([[prepare(k), prepare(v)] for k, v in obj.items()])
    if t is list:
        return [prepare(v) for v in obj]
    if t is str and not obj.isascii() and _has_surrogates(obj):
        return _Surrogates(obj)
    return obj


# ---------------------------------------------------------------- stdlib types


def _tuple(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "tuple", list(o)])


def _set(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "set", list(o)])


def _frozenset(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "frozenset", list(o)])


def _big_int(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["builtins", "int", [hex(o), 16]])


def _complex(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["builtins", "complex", [o.real, o.imag]])


def _pairs(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "dict", o.pairs])


def _dict_lossy(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "dict", [[k, v] for k, v in o.items()]])


def _list_lossy(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["builtins", "list", list(o)])


def _surrogates(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, [_TYPES, "decode_surrogates", o.text.encode("utf-8", "surrogatepass")])


def _deque(c: MsgpackCodec, o: Any) -> Any:
    if o.maxlen is None:
        return c.ext(SINGLE, ["collections", "deque", list(o)])
    return c.ext(POS, ["collections", "deque", [list(o), o.maxlen]])


def _ordered_dict(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["collections", "OrderedDict", [[k, v] for k, v in o.items()]])


def _counter(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["collections", "Counter", dict(o)])


def _datetime(c: MsgpackCodec, o: Any) -> Any:
    tz = o.tzinfo
    tz_type = type(tz)
    exact = tz is None or tz_type is _timezone_cls or tz_type is _ZoneInfo
    if exact and (
        o.fold
        or tz_type is _ZoneInfo
        or (tz_type is _timezone_cls and len(tz.__getinitargs__()) > 1)
        # fromisoformat drops sub-second UTC offsets
        or (tz_type is _timezone_cls and tz.utcoffset(None).microseconds)
    ):
        fields = {
            "year": o.year, "month": o.month, "day": o.day, "hour": o.hour,
            "minute": o.minute, "second": o.second, "microsecond": o.microsecond,
            "tzinfo": tz, "fold": o.fold,
        }  # fmt: skip
        return c.ext(KW, ["datetime", "datetime", fields])
    # Naive or fixed-offset: isoformat is exact. Other tzinfo classes keep only their offset.
    return c.ext(METHOD, ["datetime", "datetime", o.isoformat(), "fromisoformat"])


def _date(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["datetime", "date", [o.year, o.month, o.day]])


def _time(c: MsgpackCodec, o: Any) -> Any:
    tz = o.tzinfo
    if tz is not None and type(tz) is not _timezone_cls and type(tz) is not _ZoneInfo:
        offset = o.utcoffset()
        tz = None if offset is None else _timezone_cls(offset)
    fields = {
        "hour": o.hour, "minute": o.minute, "second": o.second,
        "microsecond": o.microsecond, "tzinfo": tz, "fold": o.fold,
    }  # fmt: skip
    return c.ext(KW, ["datetime", "time", fields])


def _timedelta(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["datetime", "timedelta", [o.days, o.seconds, o.microseconds]])


def _timezone(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["datetime", "timezone", list(o.__getinitargs__())])


def _zoneinfo(c: MsgpackCodec, o: Any) -> Any:
    if o.key is None:
        raise SerializationError(
            "Cannot serialize a ZoneInfo built from a file (it has no key).",
            code=SG_UNSERIALIZABLE,
            hint="use ZoneInfo('Area/City') or a fixed datetime.timezone",
        )
    return c.ext(SINGLE, ["zoneinfo", "ZoneInfo", o.key])


def _str_arg(module: str, name: str) -> Handler:
    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(SINGLE, [module, name, str(o)])

    return handler


def _uuid(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(SINGLE, ["uuid", "UUID", o.hex])


def _path(module: str, name: str) -> Handler:
    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(POS, [module, name, list(o.parts)])

    return handler


def _pattern(c: MsgpackCodec, o: Any) -> Any:
    return c.ext(POS, ["re", "compile", [o.pattern, o.flags]])


_STATIC: dict[type, Handler] | None = None
_timezone_cls: Any = None
_ZoneInfo: Any = None


def static_handlers() -> dict[type, Handler]:
    """Handlers of the exact stdlib types (built once, on first use)."""
    global _STATIC, _timezone_cls, _ZoneInfo
    if _STATIC is not None:
        return _STATIC
    import collections
    import datetime
    import decimal
    import fractions
    import ipaddress
    import pathlib
    import re
    import uuid
    import zoneinfo

    _timezone_cls, _ZoneInfo = datetime.timezone, zoneinfo.ZoneInfo
    table: dict[type, Handler] = {
        tuple: _tuple, set: _set, frozenset: _frozenset, int: _big_int, complex: _complex,
        _Pairs: _pairs, _Surrogates: _surrogates,
        collections.deque: _deque, collections.OrderedDict: _ordered_dict,
        collections.Counter: _counter, collections.defaultdict: _dict_lossy,
        datetime.datetime: _datetime, datetime.date: _date, datetime.time: _time,
        datetime.timedelta: _timedelta, datetime.timezone: _timezone,
        zoneinfo.ZoneInfo: _zoneinfo, uuid.UUID: _uuid, re.Pattern: _pattern,
        decimal.Decimal: _str_arg("decimal", "Decimal"),
        fractions.Fraction: _str_arg("fractions", "Fraction"),
    }  # fmt: skip
    for cls in (
        ipaddress.IPv4Address, ipaddress.IPv4Interface, ipaddress.IPv4Network,
        ipaddress.IPv6Address, ipaddress.IPv6Interface, ipaddress.IPv6Network,
    ):  # fmt: skip
        table[cls] = _str_arg(cls.__module__, cls.__qualname__)
    for cls in (
        pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePosixPath, pathlib.PureWindowsPath,
    ):  # fmt: skip
        table[cls] = _path(cls.__module__, cls.__qualname__)
    _STATIC = table
    return table


# ---------------------------------------------------------------- classes (one handler each)


def enum_handler(cls: type) -> Handler:
    module, name = cls.__module__, cls.__qualname__

    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(SINGLE, [module, name, o.value])

    return handler


def pydantic_v2_handler(cls: type) -> Handler:
    module, name = cls.__module__, cls.__qualname__

    def handler(c: MsgpackCodec, o: Any) -> Any:
        values = o.__dict__
        extra = o.__pydantic_extra__
        if extra:
            values = {**values, **extra}
        fields_set = o.__pydantic_fields_set__
        fs = None if fields_set == values.keys() else sorted(fields_set)
        return c.ext(_t.EXT_PYDANTIC_V2, [module, name, values, "model_construct", fs])

    return handler


def pydantic_v1_handler(cls: type) -> Handler:
    module, name = cls.__module__, cls.__qualname__

    def handler(c: MsgpackCodec, o: Any) -> Any:
        values = o.__dict__
        fields_set = o.__fields_set__
        fs = None if fields_set == values.keys() else sorted(fields_set)
        return c.ext(_t.EXT_PYDANTIC_V1, [module, name, values, "construct", fs])

    return handler


def dataclass_handler(cls: type) -> Handler:
    module, name = cls.__module__, cls.__qualname__
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(KW, [module, name, {n: getattr(o, n) for n in names}])

    return handler


def namedtuple_handler(cls: type) -> Handler:
    module, name = cls.__module__, cls.__qualname__
    fields = cls._fields  # type: ignore[attr-defined]

    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(KW, [module, name, dict(zip(fields, o, strict=True))])

    return handler


def custom_handler(cls: type, encoder: Callable[[Any], Any]) -> Handler:
    module, name = cls.__module__, cls.__qualname__

    def handler(c: MsgpackCodec, o: Any) -> Any:
        return c.ext(SINGLE, [module, name, encoder(o)])

    return handler


def send_handler(c: MsgpackCodec, o: Any) -> Any:
    if o.timeout is None:
        return c.ext(POS, ["stepgraph.types", "Send", [o.node, o.arg]])
    kwargs = {"node": o.node, "arg": o.arg, "timeout": o.timeout}
    return c.ext(KW, ["stepgraph.types", "Send", kwargs])


def _safe_repr(o: Any) -> str:
    try:
        return repr(o)
    except Exception:
        return f"{type(o).__name__}(<unrepresentable>)"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def exception_handler(c: MsgpackCodec, o: BaseException) -> Any:
    """Builtin and registered exception classes keep their class; others become a stand-in."""
    cls = type(o)
    module, name = cls.__module__, cls.__qualname__
    if module == "builtins" or cls is SerializedException or c.registry.knows(cls):
        try:
            return c.ext(POS, [module, name, list(o.args)])
        except SerializationError:  # unserializable args: keep their text
            args = [a if type(a) in _SCALARS else _safe_repr(a) for a in o.args]
            return c.ext(POS, [module, name, args])
    return c.ext(POS, [_TYPES, "SerializedException", [f"{module}.{name}", _safe_repr(o)]])


def subclass_handler(cls: type) -> Handler | None:
    """Subclasses of builtin/stdlib types we do not know: encoded as their base type."""
    static = static_handlers()
    for base in cls.__mro__[1:]:
        handler = static.get(base)
        if handler is not None:
            return handler
    if issubclass(cls, str):
        return lambda c, o: str.__str__(o)
    if issubclass(cls, float):
        return lambda c, o: float.__float__(o)
    if issubclass(cls, bytes):
        return lambda c, o: bytes(memoryview(o))
    if issubclass(cls, dict):
        return _dict_lossy
    if issubclass(cls, list):
        return _list_lossy
    return None


def unsupported_handler(c: MsgpackCodec, o: Any) -> Any:
    cls = type(o)
    what = f"{cls.__module__}.{cls.__qualname__}"
    if callable(o) and hasattr(o, "__code__"):
        what += f" ({getattr(o, '__qualname__', '?')})"
    raise SerializationError(
        f"Cannot serialize an object of type {what}.",
        code=SG_UNSERIALIZABLE,
        hint="checkpointed values must be plain data, dataclasses, pydantic models, "
        "NamedTuples, Enums or stdlib value types (functions, lambdas, locks, files and "
        "clients cannot be saved); keep such objects out of the state, or register a codec "
        "with serde.register(Cls, encoder=..., decoder=...)",
    )
