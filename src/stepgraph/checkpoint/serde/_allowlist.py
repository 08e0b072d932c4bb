"""The built-in allow-list: the exact ``(module, qualname)`` names every serializer accepts.

These are the types stepgraph itself writes (and LangGraph writes for the same values):
standard-library value types, builtin exceptions, stepgraph's own state types (also under
their ``langgraph.*`` names), and langchain-core's message and document classes. Each entry
maps one exact name to one object; nothing here is found by importing or walking what a blob
names. Two entries are not classes but fixed stepgraph functions: ``re.compile`` (how
LangGraph writes a compiled pattern) builds a pattern through ``compile_pattern``, and
``decode_surrogates`` rebuilds a string holding lone surrogates.

``check_args`` validates the arguments a blob gives a built-in type before it is called,
so that no argument makes the call expensive (see ``_limits``).
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable
from typing import Any

from stepgraph.checkpoint.serde._limits import (
    DecodeLimits,
    _bad_arg,
    check_decimal,
    check_fraction,
    check_int,
    check_int_text,
    limit_error,
    state,
)
from stepgraph.checkpoint.serde.base import SerializationError

__all__ = ["builtin_table", "check_args", "compile_pattern", "decode_surrogates"]

_Key = tuple[str, str]

# Classes resolved by importing a fixed module (stepgraph's own, langchain-core's): the
# blob's name, then the (module, qualname) the class must really have.
_FIXED_IMPORTS: dict[_Key, _Key] = {}
for _name in ("Send", "Interrupt", "Overwrite", "Command", "StateSnapshot", "PregelTask",
              "TimeoutPolicy"):  # fmt: skip
    _FIXED_IMPORTS[("stepgraph.types", _name)] = ("stepgraph.types", _name)
    _FIXED_IMPORTS[("langgraph.types", _name)] = ("stepgraph.types", _name)
_FIXED_IMPORTS[("langgraph.constants", "Send")] = ("stepgraph.types", "Send")
for _name in ("Item", "SearchItem", "GetOp"):
    _FIXED_IMPORTS[("stepgraph.store.base", _name)] = ("stepgraph.store.base", _name)
    _FIXED_IMPORTS[("langgraph.store.base", _name)] = ("stepgraph.store.base", _name)
for _module, _names in {
    "base": ("BaseMessage", "BaseMessageChunk"),
    "human": ("HumanMessage", "HumanMessageChunk"),
    "ai": ("AIMessage", "AIMessageChunk"),
    "system": ("SystemMessage", "SystemMessageChunk"),
    "chat": ("ChatMessage", "ChatMessageChunk"),
    "tool": ("ToolMessage", "ToolMessageChunk"),
    "function": ("FunctionMessage", "FunctionMessageChunk"),
    "modifier": ("RemoveMessage",),
}.items():
    for _name in _names:
        _key = (f"langchain_core.messages.{_module}", _name)
        _FIXED_IMPORTS[_key] = _key
_FIXED_IMPORTS[("langchain_core.documents.base", "Document")] = (
    "langchain_core.documents.base", "Document")  # fmt: skip

LANGCHAIN_CLASSES: frozenset[_Key] = frozenset(
    k for k in _FIXED_IMPORTS if k[0].startswith("langchain_core.")
)
"""The langchain-core classes allowed by default (LangGraph's curated list)."""

_THIS_MODULE = "stepgraph.checkpoint.serde.types"  # where decode_surrogates is named from


def decode_surrogates(data: bytes) -> str:
    """Rebuild a string holding lone surrogates (msgpack strings must be valid UTF-8)."""
    if type(data) is not bytes:
        raise _bad_arg("a string with surrogates", data)
    return data.decode("utf-8", "surrogatepass")


def compile_pattern(pattern: Any, flags: Any = 0) -> Any:
    """``re.compile(pattern, flags)`` for a stored pattern, within the decode limits."""
    import re

    if type(pattern) not in (str, bytes) or type(flags) is not int:
        raise _bad_arg("re.compile", [pattern, flags])
    current = state()
    if current is not None:
        current.pattern_chars += len(pattern)
        limit = current.limits.max_pattern_chars
        if current.pattern_chars > limit:
            raise limit_error(f"{current.pattern_chars} characters of regular expressions",
                              "max_pattern_chars", limit)
    return re.compile(pattern, flags)


def _import_fixed(module: str, name: str) -> Any:
    try:
        obj = vars(importlib.import_module(module)).get(name)
    except ImportError:
        return None
    if isinstance(obj, type) and obj.__module__ == module and obj.__qualname__ == name:
        return obj
    return None


_TABLE: dict[_Key, Any] | None = None


def builtin_table() -> dict[_Key, Any]:
    """Exact name -> object, built on first use (``import stepgraph`` stays cheap)."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    import collections
    import datetime
    import decimal
    import fractions
    import ipaddress
    import pathlib
    import uuid
    import zoneinfo

    # lazy: cycle (serde.types imports this module)
    from stepgraph.checkpoint.serde.types import SerializedException

    table: dict[_Key, Any] = {}
    for cls in (
        tuple, set, frozenset, int, complex, dict, list,
        collections.deque, collections.OrderedDict, collections.Counter,
        datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone,
        zoneinfo.ZoneInfo, uuid.UUID, decimal.Decimal, fractions.Fraction,
        ipaddress.IPv4Address, ipaddress.IPv4Interface, ipaddress.IPv4Network,
        ipaddress.IPv6Address, ipaddress.IPv6Interface, ipaddress.IPv6Network,
        SerializedException,
    ):  # fmt: skip
        table[(cls.__module__, cls.__qualname__)] = cls
    for cls in (pathlib.Path, pathlib.PosixPath, pathlib.WindowsPath, pathlib.PurePath,
                pathlib.PurePosixPath, pathlib.PureWindowsPath):  # fmt: skip
        table[(cls.__module__, cls.__qualname__)] = cls
        # Python 3.13 moved the classes to pathlib._local; blobs name either module.
        table[("pathlib", cls.__qualname__)] = cls
        table[("pathlib._local", cls.__qualname__)] = cls
    for name, obj in vars(builtins).items():
        if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__name__ == name:
            table[("builtins", name)] = obj  # (not under aliases such as IOError)
    table[("re", "compile")] = compile_pattern
    table[(_THIS_MODULE, "decode_surrogates")] = decode_surrogates
    _TABLE = table
    return table


def fixed_import(key: _Key) -> Any:
    """The class a fixed-import name stands for (``None``: not one, or not installed)."""
    target = _FIXED_IMPORTS.get(key)
    return None if target is None else _import_fixed(*target)


# ------------------------------------------------------------------ argument checks

Check = Callable[[int, Any, DecodeLimits], None]


def _list_arg(what: str) -> Check:
    def check(code: int, arg: Any, limits: DecodeLimits) -> None:
        if code != 0 or type(arg) is not list:
            raise _bad_arg(what, arg)

    return check


def _pairs_arg(what: str) -> Check:
    def check(code: int, arg: Any, limits: DecodeLimits) -> None:
        if code != 0 or type(arg) is not list or any(
            type(p) is not list or len(p) != 2 for p in arg
        ):
            raise _bad_arg(what, arg)

    return check


def _int(code: int, arg: Any, limits: DecodeLimits) -> None:
    if code == 1 and type(arg) is list and len(arg) == 2:
        check_int_text(arg[0], arg[1], limits)
    elif code == 0 and type(arg) is str:
        check_int_text(arg, 10, limits)
    elif code == 0 and type(arg) in (int, float):
        if type(arg) is int:
            check_int(arg, limits)
    else:
        raise _bad_arg("builtins.int", arg)


def _numbers(what: str, n: int) -> Check:
    def check(code: int, arg: Any, limits: DecodeLimits) -> None:
        if code != 1 or type(arg) is not list or len(arg) > n:
            raise _bad_arg(what, arg)
        for a in arg:
            if type(a) is int:
                check_int(a, limits)
            elif type(a) is not float:
                raise _bad_arg(what, arg)

    return check


def _decimal(code: int, arg: Any, limits: DecodeLimits) -> None:
    if code != 0:
        raise _bad_arg("decimal.Decimal", arg)
    check_decimal(arg, limits)


def _fraction(code: int, arg: Any, limits: DecodeLimits) -> None:
    if code == 0:
        check_fraction(arg, limits)
    elif code == 1 and type(arg) is list and len(arg) == 2 and all(type(a) is int for a in arg):
        for a in arg:
            check_int(a, limits)
    else:
        raise _bad_arg("fractions.Fraction", arg)


def _deque(code: int, arg: Any, limits: DecodeLimits) -> None:
    if code == 0 and type(arg) is list:
        return
    if code == 1 and type(arg) is list and len(arg) == 2 and type(arg[0]) is list and (
        arg[1] is None or type(arg[1]) is int
    ):
        return
    raise _bad_arg("collections.deque", arg)


def _counter(code: int, arg: Any, limits: DecodeLimits) -> None:
    if code != 0 or type(arg) is not dict:
        raise _bad_arg("collections.Counter", arg)


def _short_str(what: str, n: int) -> Check:
    def check(code: int, arg: Any, limits: DecodeLimits) -> None:
        if code != 0 or type(arg) is not str or len(arg) > n:
            raise _bad_arg(what, arg)

    return check


_CHECKS: dict[Any, Check] | None = None


def _checks() -> dict[Any, Check]:
    global _CHECKS
    if _CHECKS is not None:
        return _CHECKS
    import collections
    import decimal
    import fractions
    import uuid
    import zoneinfo

    _CHECKS = {
        tuple: _list_arg("builtins.tuple"), list: _list_arg("builtins.list"),
        set: _list_arg("builtins.set"), frozenset: _list_arg("builtins.frozenset"),
        dict: _pairs_arg("builtins.dict"),
        collections.OrderedDict: _pairs_arg("collections.OrderedDict"),
        collections.Counter: _counter, collections.deque: _deque,
        int: _int, complex: _numbers("builtins.complex", 2),
        decimal.Decimal: _decimal, fractions.Fraction: _fraction,
        uuid.UUID: _short_str("uuid.UUID", 64), zoneinfo.ZoneInfo: _short_str("zoneinfo", 255),
    }  # fmt: skip
    return _CHECKS


def checked_types() -> dict[Any, Check]:
    """The built-in types whose arguments ``check_args`` checks."""
    return _checks()


def check_args(target: Any, code: int, arg: Any, limits: DecodeLimits) -> None:
    """Refuse arguments that would make calling the built-in ``target`` costly or odd."""
    check = _checks().get(target)
    if check is not None:
        try:
            check(code, arg, limits)
        except SerializationError:
            raise
        except Exception:  # an argument so odd the check itself fails: corrupt
            raise _bad_arg(f"{target.__module__}.{target.__qualname__}", arg) from None
