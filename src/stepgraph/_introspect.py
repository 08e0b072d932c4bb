"""Signatures and type hints of node functions, read once per function.

Adding a node inspects its function (the input schema its first parameter names, the
``Command`` destinations its return annotation lists, the parameters to inject). A graph
that adds one function as many nodes (a 1000-node chain) would evaluate the same string
annotations a thousand times: ``typing.get_type_hints`` compiles each one anew. These
helpers remember the answer per plain function, checked against the function's code,
defaults and annotations, so a function changed since is read again. Failures are not
remembered (a forward reference may resolve later).
"""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

T = TypeVar("T")

__all__ = ["derived", "signature", "type_hints"]

_Key = tuple[Any, ...]
_SIGNATURES: weakref.WeakKeyDictionary[Any, tuple[_Key, inspect.Signature]] = (
    weakref.WeakKeyDictionary()
)
_HINTS: weakref.WeakKeyDictionary[Any, dict[bool, tuple[_Key, dict[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)
_Facts = tuple["weakref.ref[Any]", _Key, dict[Any, Any]]
_DERIVED: dict[int, _Facts] = {}
"""``id(fn)`` -> (a weak reference to ``fn``, its stamp, ``compute`` -> value). Keyed by
id, not by a ``WeakKeyDictionary``: a lookup makes no weak reference (adding a node looks a
function up four times). The reference tells a reused id apart; its callback drops the
entry when the function dies."""


def _stamp(fn: types.FunctionType) -> _Key:
    """What a plain function's signature and hints depend on (compared by identity)."""
    return (fn.__code__, fn.__defaults__, fn.__kwdefaults__, fn.__annotations__,
            fn.__dict__.get("__signature__"), fn.__dict__.get("__wrapped__"))


def _unchanged(stamp: _Key, fn: types.FunctionType) -> bool:
    """Whether ``fn`` still has its ``stamp`` (``_stamp(fn)`` compared field by field,
    without making the tuple: lookups of a function far outnumber its changes)."""
    d = fn.__dict__
    return (
        stamp[0] is fn.__code__
        and stamp[1] is fn.__defaults__
        and stamp[2] is fn.__kwdefaults__
        and stamp[3] is fn.__annotations__
        and stamp[4] is d.get("__signature__")
        and stamp[5] is d.get("__wrapped__")
    )


def signature(fn: Any) -> inspect.Signature:
    """``inspect.signature(fn)``, remembered for plain functions."""
    if type(fn) is not types.FunctionType:
        return inspect.signature(fn)
    hit = _SIGNATURES.get(fn)
    if hit is not None and _unchanged(hit[0], fn):
        return hit[1]
    sig = inspect.signature(fn)
    _SIGNATURES[fn] = (_stamp(fn), sig)
    return sig


def type_hints(fn: Any, *, include_extras: bool = False) -> dict[str, Any]:
    """``typing.get_type_hints(fn)``, remembered for plain functions (do not change the
    returned map)."""
    if type(fn) is not types.FunctionType:
        return get_type_hints(fn, include_extras=include_extras)
    entries = _HINTS.get(fn)
    if entries is not None:
        hit = entries.get(include_extras)
        if hit is not None and _unchanged(hit[0], fn):
            return hit[1]
    hints = get_type_hints(fn, include_extras=include_extras)
    if entries is None:
        entries = _HINTS[fn] = {}
    entries[include_extras] = (_stamp(fn), hints)
    return hints


def derived(fn: Any, compute: Callable[[Any], T]) -> T:
    """``compute(fn)``, remembered per plain function and ``compute`` (for facts read from
    its signature and hints only: whether it is async, what to inject, its input schema).
    An exception is not remembered; other callables are computed every time."""
    if type(fn) is not types.FunctionType:
        return compute(fn)
    key = id(fn)
    entry = _DERIVED.get(key)
    if entry is not None:
        ref, stamp, values = entry
        if ref() is fn and _unchanged(stamp, fn):
            if compute in values:
                return values[compute]  # type: ignore[no-any-return]
        else:
            entry = None  # another function's (a reused id) or a changed one: start over
    value = compute(fn)
    if entry is None:
        entry = _DERIVED[key] = (weakref.ref(fn, _forget(key)), _stamp(fn), {})
    entry[2][compute] = value
    return value


def _forget(key: int) -> Callable[[Any], None]:
    """The callback dropping ``key``'s entry when its function dies (unless the id was
    reused by a function entered since). It holds the table itself: at interpreter exit
    module globals may already be cleared when the last functions die."""
    table = _DERIVED

    def forget(ref: Any) -> None:
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            table.pop(key, None)

    return forget
