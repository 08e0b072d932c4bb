"""Reserved names: the only module that spells them.

Public names (``START``, ``END``, ``TAG_NOSTREAM``, ``TAG_HIDDEN``) match LangGraph's, so
ported programs keep working; the rest are internal channel and write names that a
checkpoint written by stepgraph uses.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from stepgraph import _constants
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

START: Final = sys.intern("__start__")
"""The virtual first node: graph input is written to it."""
END: Final = sys.intern("__end__")
"""The virtual last node: an edge to it ends a branch."""
TAG_NOSTREAM: Final = "nostream"
TAG_HIDDEN: Final = "langsmith:hidden"

# Internal channels and write keys (the wire/checkpoint format, kept LangGraph-compatible).
TASKS: Final = sys.intern("__pregel_tasks")
"""Topic of ``Send`` packets: each becomes a PUSH task in the next step."""
PUSH: Final = sys.intern("__pregel_push")
PULL: Final = sys.intern("__pregel_pull")
INPUT: Final = sys.intern("__input__")
INTERRUPT: Final = sys.intern("__interrupt__")
RESUME: Final = sys.intern("__resume__")
ERROR: Final = sys.intern("__error__")
ERROR_SOURCE_NODE: Final = sys.intern("__error_source_node__")
"""Saved beside a failed task's ``__error__`` (the node's error) when the node has an error
handler that still has to run: on resume the handler runs, not the node. Value: the node."""
NO_WRITES: Final = sys.intern("__no_writes__")
RETURN: Final = sys.intern("__return__")
SCHEDULED: Final = sys.intern("__scheduled__")
ROOT: Final = sys.intern("__root__")
NULL_TASK_ID: Final = "00000000-0000-0000-0000-000000000000"
NS_SEP: Final = "|"
NS_END: Final = ":"
BRANCH_PREFIX: Final = "branch:to:"
JOIN_PREFIX: Final = "join:"
SELF: Final = "__self__"

RESERVED: Final = frozenset(
    {TASKS, PUSH, PULL, INPUT, INTERRUPT, RESUME, ERROR, ERROR_SOURCE_NODE, NO_WRITES, RETURN,
     SCHEDULED}
)
"""Write keys that never name a user channel."""

WRITES_IDX_MAP: Final = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}
"""Special writes get fixed negative indices in a checkpoint's pending writes."""


class _Missing:
    """Sentinel for "no value" where ``None`` is a valid value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()

OVERWRITE_KEY: Final = "__overwrite__"
"""Dict key (and ``Overwrite.type``) marking a write that bypasses a reducer."""


def __getattr__(name: str) -> Any:
    """Names LangGraph moved out of ``langgraph.constants``: still importable, with a warning."""
    if name in ("Send", "Interrupt"):
        deprecated_since(
            LangGraphDeprecatedSinceV10,
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
        )
        # lazy: cycle (types imports constants)
        import stepgraph.types

        return getattr(stepgraph.types, name)

    if name in _constants.__all__:
        deprecated_since(
            LangGraphDeprecatedSinceV10,
            f"Importing {name} from langgraph.constants is deprecated. This constant is now "
            "private and should not be used directly.",
        )
        return getattr(_constants, name)
    raise AttributeError(f"module 'stepgraph.constants' has no attribute {name!r}")
