"""Finding compiled graphs that a function node calls (its closure and globals it names)."""

from __future__ import annotations

import functools
from typing import Any


def find_subgraphs(fn: Any) -> list[Any]:
    """Compiled graphs referenced by ``fn``'s closure cells or the globals its code names."""
    from stepgraph.pregel.main import Pregel

    while isinstance(fn, functools.partial):
        fn = fn.func
    code = getattr(fn, "__code__", None)
    found: list[Any] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, Pregel) and value not in found:
            found.append(value)
    if code is not None:
        glb = getattr(fn, "__globals__", {})
        for name in code.co_names:
            value = glb.get(name)
            if isinstance(value, Pregel) and value not in found:
                found.append(value)
    return found
