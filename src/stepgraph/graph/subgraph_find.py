"""Finding the compiled graphs a function node calls, from its closure, globals and bytecode.

A node that calls a graph makes it a subgraph (for ``get_state(subgraphs=True)``, drawing
with ``xray``...). The graph can be reached as:

* a closure variable or a global the function's own code names (``sub.invoke(...)``);
* an attribute chain from one (``holder.payload.invoke(...)``, ``CONFIG.graphs.main``),
  read from the bytecode of the function and of the functions nested in it (closure
  variables only there: a global named only in a nested function is out of reach);
* the same, through ``__wrapped__`` (decorated functions) and ``functools.partial``.

Attributes are resolved without running user code (no properties, no ``__getattr__``), and
plain data values (str, list, dict...) are never looked into. Subscripts (``graphs[0]``) and
attributes of ``self`` are not followed.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
from typing import Any

from stepgraph.pregel.main import Pregel

_LEAVES = (str, bytes, int, float, complex, bool, type(None), list, tuple, dict, set, frozenset,
           types.BuiltinFunctionType)
_ATTR_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_SLOT_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)


def find_subgraphs(fn: Any) -> list[Any]:
    """The compiled graphs ``fn`` can reach (see the module docstring), in order found."""
    code = getattr(fn, "__code__", None)
    if type(code) is types.CodeType and not code.co_freevars and (
        getattr(fn, "__wrapped__", None) is None
    ):
        glb = getattr(fn, "__globals__", None) or {}
        if not any(name in glb for name in code.co_names):
            return []  # no closure and no global it names: nothing to start from (most nodes)
    found: list[Any] = []
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        while isinstance(fn, functools.partial):
            fn = fn.func
        _scan(fn, Pregel, found)
        fn = getattr(fn, "__wrapped__", None)
    return found


def _scan(fn: Any, pregel: type, found: list[Any]) -> None:
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return
    closure = _closure_values(fn, code)
    for value in closure.values():
        if isinstance(value, pregel):
            _add(found, value)
    glb = getattr(fn, "__globals__", None) or {}
    named = [glb[n] for n in code.co_names if n in glb]
    if all(_is_leaf(v) for v in (*closure.values(), *named) if not isinstance(v, pregel)) and (
        not any(isinstance(v, pregel) for v in named)
    ):
        return  # no global graph and nothing an attribute chain could start from
    _walk(code, closure, glb, pregel, found, top=True)


def _closure_values(fn: Any, code: types.CodeType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a variable not assigned yet
            continue
    return out


def _walk(code: types.CodeType, closure: dict[str, Any], glb: dict[str, Any], pregel: type,
          found: list[Any], *, top: bool) -> None:
    """Follow every ``root.a.b...`` chain in ``code`` (and its nested code objects)."""
    value: Any = _NOTHING
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op == "LOAD_DEREF":
            value = closure.get(ins.argval, _NOTHING)
        elif op == "LOAD_GLOBAL" and top:
            value = glb.get(ins.argval, _NOTHING)
            if isinstance(value, pregel):
                _add(found, value)
        elif op in _ATTR_OPS and value is not _NOTHING:
            value = _static_attr(value, ins.argval)
            if isinstance(value, pregel):
                _add(found, value)
                value = _NOTHING
            continue
        else:
            value = _NOTHING
            continue
        if _is_leaf(value):
            value = _NOTHING
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _walk(const, closure, glb, pregel, found, top=False)


class _Nothing:
    __slots__ = ()


_NOTHING: Any = _Nothing()


def _is_leaf(value: Any) -> bool:
    return type(value) in _LEAVES or value is _NOTHING


def _static_attr(obj: Any, name: str) -> Any:
    """``obj.name`` when it is stored data (an instance, class or module attribute or a
    slot); ``_NOTHING`` for anything computed (properties, ``__getattr__``) or missing."""
    if _is_leaf(obj):
        return _NOTHING
    try:
        value = inspect.getattr_static(obj, name)
    except AttributeError:
        return _NOTHING
    if isinstance(value, _SLOT_DESCRIPTORS):
        try:
            return getattr(obj, name)
        except AttributeError:
            return _NOTHING
    if isinstance(value, (property, staticmethod, classmethod, types.FunctionType)):
        return _NOTHING
    return value


def _add(found: list[Any], graph: Any) -> None:
    if all(graph is not g for g in found):
        found.append(graph)
