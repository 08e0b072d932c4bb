"""Coded errors of the LangGraph drop-in mode (SG61x)."""

from __future__ import annotations

from typing import Any

from stepgraph.errors import ForeignGraphError, StepgraphError

__all__ = ["ForeignGraphError", "LangGraphAliasError", "UnsupportedNameError"]


class LangGraphAliasError(StepgraphError, ModuleNotFoundError):
    """The alias cannot be installed (SG610) or has no module for a ``langgraph`` path (SG611).

    A ``ModuleNotFoundError``, so ``try: import langgraph.x except ImportError`` still works.
    """

    code = "SG611"

    def __init__(self, *args: Any, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = name


class UnsupportedNameError(StepgraphError, ImportError):
    """A LangGraph name stepgraph deliberately does not provide (SG612)."""

    code = "SG612"

    def __init__(self, *args: Any, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = name
