"""Module loggers that import ``logging`` only when something is logged.

The stdlib ``logging`` package (with ``traceback``, ``string``, ...) is a large share of a
bare ``import stepgraph.graph``, and the modules the graph API loads log only on rare paths
(a warning, a failed trace processor). ``LazyLogger(__name__)`` stands for
``logging.getLogger(__name__)``: any attribute is the real logger's, looked up on use.
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    """``logging.getLogger(name)``, resolved on first use."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        import logging

        return getattr(logging.getLogger(self.name), attr)
