"""``langgraph._internal._typing``: typing helpers in LangGraph's private module."""

from __future__ import annotations

from typing import Any, TypeAlias

from typing_extensions import TypedDict

from stepgraph.constants import MISSING  # noqa: F401 - LangGraph's sentinel name

StateLike: TypeAlias = Any
"""Anything usable as a state schema (TypedDict, dataclass, pydantic model...)."""

EMPTY_SEQ: tuple[str, ...] = ()


class DeprecatedKwargs(TypedDict):
    """The type of ``**kwargs`` that only carry deprecated arguments (``Unpack[...]``)."""
