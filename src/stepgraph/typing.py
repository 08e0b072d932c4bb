"""Type variables of LangGraph's public ``langgraph.typing`` module.

``StateT`` (a graph's state), ``InputT`` / ``OutputT`` (its input and output schemas, by
default the state) and ``ContextT`` (the run's ``context``, ``None`` by default).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict, TypeVar

__all__ = ["ContextT", "ContextT_contra", "DeprecatedKwargs", "InputT", "NodeInputT", "NodeInputT_contra", "OutputT",
           "StateLike", "StateT", "StateT_co", "StateT_contra"]

StateLike = Any
"""Anything usable as a state schema (TypedDict, dataclass, pydantic model...)."""

StateT = TypeVar("StateT", bound=StateLike)
StateT_co = TypeVar("StateT_co", bound=StateLike, covariant=True)
StateT_contra = TypeVar("StateT_contra", bound=StateLike, contravariant=True)
ContextT = TypeVar("ContextT", bound=StateLike | None, default=None)
ContextT_contra = TypeVar("ContextT_contra", bound=StateLike | None, contravariant=True, default=None)
InputT = TypeVar("InputT", bound=StateLike, default=StateT)
OutputT = TypeVar("OutputT", bound=StateLike, default=StateT)
NodeInputT = TypeVar("NodeInputT", bound=StateLike)
NodeInputT_contra = TypeVar("NodeInputT_contra", bound=StateLike, contravariant=True)


class DeprecatedKwargs(TypedDict):
    """The extra keyword arguments of ``stream``/``invoke``... (``**kwargs: Unpack[...]``):
    none, as in LangGraph, so a type checker flags any. At run time the deprecated
    ``checkpoint_during`` is still mapped onto ``durability`` (with a warning); any other is
    refused with ``UnsupportedArgumentError`` (SG311)."""
