"""The langchain-core check done before anything in ``stepgraph.prebuilt`` is imported.

This module imports nothing heavy, so the check itself works without langchain-core.
"""

from __future__ import annotations

import importlib.util

from stepgraph.errors import StepgraphError

__all__ = ["MissingDependencyError", "require_langchain"]

INSTALL_HINT = "pip install 'stepgraph[langchain]'"


class MissingDependencyError(StepgraphError, ImportError):
    """An optional dependency is not installed (also an ``ImportError``)."""

    code = "SG601"


def require_langchain(feature: str = "stepgraph.prebuilt") -> None:
    """Raise ``MissingDependencyError`` (SG601) if langchain-core cannot be imported."""
    try:
        found = importlib.util.find_spec("langchain_core") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingDependencyError(
            f"{feature} needs langchain-core, which is not installed.",
            code="SG601",
            hint=INSTALL_HINT,
        )
