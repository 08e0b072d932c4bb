"""Shared fixtures for the scenario suite.

Every scenario is written once and runs on both drivers: ``sync`` calls ``graph.invoke`` /
``graph.stream``; ``async`` calls ``asyncio.run(graph.ainvoke(...))`` and collects
``graph.astream(...)``. Expected outputs were taken from LangGraph 1.2.22 run as an oracle.

Re-checking against LangGraph: copy the files except ``test_stepgraph_errors.py``, replace
``stepgraph`` by ``langgraph``, drop the xfail marks (and make ``Driver.xfail_on`` a no-op),
then run pytest in a LangGraph venv with ``-m "not langgraph_only"``: all tests pass there.
A strict xfail here marks a stepgraph bug; ``stepgraph_only`` marks intended differences.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stepgraph_only: behaviour stepgraph has on purpose and LangGraph lacks"
    )


class Driver:
    """Runs a compiled graph through the sync or the async API with the same call shape."""

    def __init__(self, mode: str, node: pytest.Item | None = None) -> None:
        self.mode = mode
        self._node = node

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    def xfail_on(self, mode: str, reason: str) -> None:
        """Mark the running test as a strict xfail for one driver only (a driver-specific bug)."""
        if self.mode == mode and self._node is not None:
            self._node.add_marker(pytest.mark.xfail(strict=True, reason=reason))

    def invoke(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """``graph.invoke`` or ``asyncio.run(graph.ainvoke(...))``."""
        if self.mode == "sync":
            return graph.invoke(input, config, **kwargs)
        return asyncio.run(graph.ainvoke(input, config, **kwargs))

    def stream(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> list[Any]:
        """All chunks of ``graph.stream`` or ``graph.astream``, as a list."""
        if self.mode == "sync":
            return list(graph.stream(input, config, **kwargs))

        async def collect() -> list[Any]:
            return [chunk async for chunk in graph.astream(input, config, **kwargs)]

        return asyncio.run(collect())

    def stream_partial(
        self, graph: Any, input: Any, config: Any = None, **kwargs: Any
    ) -> tuple[list[Any], BaseException | None]:
        """Chunks streamed before the run ended, and the exception that ended it (or None)."""
        chunks: list[Any] = []
        if self.mode == "sync":
            try:
                for chunk in graph.stream(input, config, **kwargs):
                    chunks.append(chunk)
            except Exception as exc:
                return chunks, exc
            return chunks, None

        async def collect() -> BaseException | None:
            try:
                async for chunk in graph.astream(input, config, **kwargs):
                    chunks.append(chunk)
            except Exception as exc:
                return exc
            return None

        return chunks, asyncio.run(collect())

    def __repr__(self) -> str:
        return f"Driver({self.mode!r})"


@pytest.fixture(params=["sync", "async"])
def driver(request: pytest.FixtureRequest) -> Driver:
    """A ``Driver`` for each of the two run APIs."""
    return Driver(request.param, request.node)
