"""The ``extract`` of ``POST /threads/search``: values picked out of each thread by path.

A path is dot-separated keys with optional bracketed list indices, negative ones counting
from the end: ``values.messages[-1].content``, ``metadata.user``. It starts at a field of the
thread (``values``, ``metadata``, ``config``, ``interrupts``, ...). A key or index that is not
there extracts ``null``; nothing is evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_EXTRACT_PATHS", "PATH_PATTERN", "extract_fields", "extract_roots", "parse_path"]

MAX_EXTRACT_PATHS = 10
_KEY = r"[A-Za-z_][A-Za-z0-9_\-]*"
PATH_PATTERN = rf"^{_KEY}(\[-?\d{{1,6}}\])*(\.{_KEY}(\[-?\d{{1,6}}\])*){{0,15}}$"
_STEP = re.compile(rf"({_KEY})|\[(-?\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """The keys and indices of ``path`` (already checked against ``PATH_PATTERN``)."""
    return [key if key else int(index) for key, index in _STEP.findall(path)]


def _follow(value: Any, steps: list[str | int]) -> Any:
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return None
            value = value[step]
        elif isinstance(value, Mapping):
            value = value.get(step)
        else:
            return None
    return value


def extract_fields(thread: Mapping[str, Any], extract: Mapping[str, str]) -> dict[str, Any]:
    """``{alias: value at path}`` for one thread."""
    return {alias: _follow(thread, parse_path(path)) for alias, path in extract.items()}


def extract_roots(extract: Mapping[str, str] | None) -> frozenset[str]:
    """The thread fields the paths start at (read even when ``select`` leaves them out)."""
    if not extract:
        return frozenset()
    return frozenset(str(parse_path(p)[0]) for p in extract.values())
