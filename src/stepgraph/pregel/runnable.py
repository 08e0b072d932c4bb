"""A compiled graph as a langchain-core ``Runnable``: ``graph | other`` and ``other | graph``
compose it into a ``RunnableSequence`` (needs langchain-core, imported on first use)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any


def as_runnable(graph: Any) -> Any:
    """``graph`` wrapped as a ``Runnable`` whose ``invoke``/``stream`` (and async twins) run it
    with the caller's config, so callbacks and tracing reach the graph's run."""
    from langchain_core.runnables import Runnable

    class GraphRunnable(Runnable[Any, Any]):
        def __init__(self, graph: Any) -> None:
            self.graph = graph
            self.name = graph.name

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return self.graph.invoke(input, config, **kwargs)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return await self.graph.ainvoke(input, config, **kwargs)

        def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
            yield from self.graph.stream(input, config, **kwargs)

        async def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
            async for chunk in self.graph.astream(input, config, **kwargs):
                yield chunk

        def transform(self, input: Iterator[Any], config: Any = None, **kwargs: Any) -> Iterator[Any]:
            yield from self.stream(_last(input), config, **kwargs)

        async def atransform(self, input: AsyncIterator[Any], config: Any = None,
                             **kwargs: Any) -> AsyncIterator[Any]:
            last = None
            async for chunk in input:
                last = chunk
            async for chunk in self.astream(last, config, **kwargs):
                yield chunk

    return GraphRunnable(graph)


def _last(chunks: Iterator[Any]) -> Any:
    last = None
    for chunk in chunks:
        last = chunk
    return last


def compose(left: Any, right: Any) -> Any:
    """``left | right`` where either side is a compiled graph."""
    from langchain_core.runnables import RunnableSequence
    from langchain_core.runnables.base import coerce_to_runnable

    def runnable(x: Any) -> Any:
        return as_runnable(x) if hasattr(x, "nodes") and hasattr(x, "channels") else coerce_to_runnable(x)

    return RunnableSequence(runnable(left), runnable(right))
