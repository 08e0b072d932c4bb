"""The run API of a compiled graph: ``invoke``/``stream`` and their async twins.

Both twins build the same ``RunLoop`` (``_prepare``) and shape the same stream parts;
only the driver differs (threads vs. the event loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph._running import current_task
from stepgraph.config import ensure_config, with_run_metadata
from stepgraph.constants import INTERRUPT
from stepgraph.engine.driver_sync import drive_sync
from stepgraph.engine.loop import RunLoop
from stepgraph.engine.subgraph import child_config, runs_on_its_own
from stepgraph.engine.taskconfig import DURABILITY_KEY, RUNTIME_KEY
from stepgraph.engine.timetravel import root_config
from stepgraph.engine.tracing import RunTracer, tracing_requested
from stepgraph.errors import GraphDrained, GraphInterrupt
from stepgraph.pregel.setup import resolve_checkpointer, resolve_context
from stepgraph.runtime import Runtime
from stepgraph.stream.output import normalize_modes, shape
from stepgraph.stream.sink import ForwardingSink, StreamSink
from stepgraph.types import GraphOutput
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel


class _Run:
    __slots__ = ("loop", "single", "subgraphs", "version", "live", "maps")

    def __init__(self, loop: RunLoop, single: bool, subgraphs: bool, version: str, live: bool) -> None:
        self.loop = loop
        self.single = single
        self.subgraphs = subgraphs
        self.version = version
        self.live = live
        self.maps: Any = None
        if version == "v2":
            from stepgraph.stream.typed_v2 import mappers

            maps = mappers(loop.graph)
            self.maps = maps if maps != (None, None) else None

    def shape(self, part: Any) -> Any:
        return shape(part, self.single, self.subgraphs, self.version, self.maps)


class PregelAPI:
    """Mixin with the public run methods of ``Pregel``."""

    def _prepare(
        self: Pregel,  # type: ignore[misc]
        input: Any,
        config: Any,
        *,
        stream_mode: Any,
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        subgraphs: bool = False,
        context: Any = None,
        version: str = "v1",
        default_mode: str | None = None,
        values_only: bool = False,
        control: Any = None,
    ) -> _Run:
        parent = current_task()
        if parent is not None:
            if runs_on_its_own(parent, self.config) or runs_on_its_own(parent, config):
                parent = None
            else:
                config = child_config(self, parent, ensure_config(self.config, config))
        if parent is None:
            config = root_config(with_run_metadata(ensure_config(self.config, config)))
        if values_only:
            modes, single = [], True
        else:
            modes, single = normalize_modes(stream_mode, default_mode or self.stream_mode)
        mode_set = frozenset(modes)
        sink: StreamSink
        if parent is not None and parent.run.sink.subgraphs:
            ns = config["configurable"]["checkpoint_ns"]
            sink = ForwardingSink(parent.run.sink, mode_set, tuple(ns.split("|")) if ns else (),
                                  local_subgraphs=subgraphs)
        elif parent is not None:
            ns = config["configurable"]["checkpoint_ns"]
            sink = StreamSink(mode_set, subgraphs=subgraphs, base=tuple(ns.split("|")) if ns else ())
        else:
            sink = StreamSink(mode_set, subgraphs=subgraphs)
        saver = resolve_checkpointer(self, config, parent)
        loop = RunLoop(
            self,
            input,
            config,
            sink=sink,
            output_keys=output_keys if output_keys is not None else self.output_channels,
            stream_keys=output_keys if output_keys is not None else self.stream_keys,
            interrupt_before=interrupt_before if interrupt_before is not None else self.interrupt_before_nodes,
            interrupt_after=interrupt_after if interrupt_after is not None else self.interrupt_after_nodes,
            checkpointer=saver,
            store=self.store,
            context=resolve_context(self, context),
            durability=durability or config["configurable"].get(DURABILITY_KEY) or "async",
            runtime=parent.runtime if parent is not None else _config_runtime(config),
            control=control if control is not None else (
                parent.runtime.control if parent is not None else None
            ),
        )
        if parent is not None:
            loop.parent_task = parent
        if tracing_requested(config):
            loop.tracer = RunTracer(loop)
        live = (bool({"custom", "messages"} & mode_set) or self.stream_eager) and parent is None
        return _Run(loop, single, subgraphs, version, live)

    # -- composition with langchain-core runnables ------------------------------------------
    def __or__(self, other: Any) -> Any:
        from stepgraph.pregel.runnable import compose

        return compose(self, other)

    def __ror__(self, other: Any) -> Any:
        from stepgraph.pregel.runnable import compose

        return compose(other, self)

    # -- sync ---------------------------------------------------------------------------------
    def stream(
        self, input: Any, config: Any = None, *, context: Any = None, stream_mode: Any = None,
        print_mode: Any = (), output_keys: Any = None, interrupt_before: Any = None,
        interrupt_after: Any = None, durability: Any = None, subgraphs: bool = False,
        debug: bool | None = None, version: str = "v1", control: Any = None, **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph, yielding what ``stream_mode`` asks for after each step or task.

        One mode (a string) yields its payloads; a list yields ``(mode, payload)``;
        ``subgraphs=True`` prefixes the namespace tuple. ``control`` is a ``RunControl``
        whose ``request_drain()`` stops the run at the next step (``GraphDrained``).
        """
        raw = kwargs.pop("_raw_parts", False)
        run = self._prepare(
            input, config, stream_mode=stream_mode, output_keys=output_keys,
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            durability=_durability(durability, kwargs), subgraphs=subgraphs, context=context,
            version=version, control=control,
        )
        streaming = run.loop.parent_task is None
        for part in drive_sync(run.loop, live=run.live, streaming=streaming):
            yield part if raw else run.shape(part)
        _raise_nested_interrupt(run.loop)

    def invoke(
        self, input: Any, config: Any = None, *, context: Any = None, stream_mode: Any = "values",
        print_mode: Any = (), output_keys: Any = None, interrupt_before: Any = None,
        interrupt_after: Any = None, durability: Any = None, version: str = "v1",
        control: Any = None, debug: bool | None = None, subgraphs: bool = False, **kwargs: Any,
    ) -> Any:
        """Run the graph to the end and return its output (the final state by default).

        ``debug`` and ``subgraphs`` are accepted as ``stream`` takes them; they do not change
        what is returned.
        """
        durability = _durability(durability, kwargs)
        if stream_mode == "values":
            run = self._prepare(
                input, config, stream_mode=None, output_keys=output_keys,
                interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                durability=durability, context=context, values_only=True, control=control,
                version=version,
            )
            for _ in drive_sync(run.loop):
                pass
            return _result(run.loop, version, run)
        return list(
            self.stream(
                input, config, context=context, stream_mode=stream_mode, output_keys=output_keys,
                interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                durability=durability, version=version, control=control,
            )
        )

    def batch(self, inputs: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        configs = config if isinstance(config, list) else [config] * len(inputs)
        return [self.invoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True)]

    # -- async --------------------------------------------------------------------------------
    async def astream(
        self, input: Any, config: Any = None, *, context: Any = None, stream_mode: Any = None,
        print_mode: Any = (), output_keys: Any = None, interrupt_before: Any = None,
        interrupt_after: Any = None, durability: Any = None, subgraphs: bool = False,
        debug: bool | None = None, version: str = "v1", control: Any = None, **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of ``stream``."""
        raw = kwargs.pop("_raw_parts", False)
        run = self._prepare(
            input, config, stream_mode=stream_mode, output_keys=output_keys,
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            durability=_durability(durability, kwargs), subgraphs=subgraphs, context=context,
            version=version, control=control,
        )
        from contextlib import aclosing

        from stepgraph.engine.driver_async import drive_async

        # closed at once when the consumer stops early: the step's tasks are cancelled now
        async with aclosing(drive_async(run.loop)) as parts:
            async for part in parts:
                yield part if raw else run.shape(part)
        _raise_nested_interrupt(run.loop)

    async def ainvoke(
        self, input: Any, config: Any = None, *, context: Any = None, stream_mode: Any = "values",
        print_mode: Any = (), output_keys: Any = None, interrupt_before: Any = None,
        interrupt_after: Any = None, durability: Any = None, version: str = "v1",
        control: Any = None, debug: bool | None = None, subgraphs: bool = False, **kwargs: Any,
    ) -> Any:
        """Async twin of ``invoke``."""
        durability = _durability(durability, kwargs)
        if stream_mode == "values":
            run = self._prepare(
                input, config, stream_mode=None, output_keys=output_keys,
                interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                durability=durability, context=context, values_only=True, control=control,
                version=version,
            )
            from stepgraph.engine.driver_async import drive_async

            async for _ in drive_async(run.loop):
                pass
            return _result(run.loop, version, run)
        return [
            chunk
            async for chunk in self.astream(
                input, config, context=context, stream_mode=stream_mode, output_keys=output_keys,
                interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                durability=durability, version=version, control=control,
            )
        ]

    async def abatch(self, inputs: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        import asyncio

        configs = config if isinstance(config, list) else [config] * len(inputs)
        return list(await asyncio.gather(*(self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True))))


def _config_runtime(config: Any) -> Any:
    """A ``Runtime`` a root run's config carries (LangGraph's ``__pregel_runtime`` key: code
    that patches the store or context of a run it starts puts one there), else ``None``."""
    runtime = (config.get("configurable") or {}).get(RUNTIME_KEY)
    return runtime if isinstance(runtime, Runtime) else None


def _durability(durability: Any, kwargs: dict[str, Any]) -> Any:
    """``durability``, or the deprecated ``checkpoint_during`` mapped onto it; any other
    unknown keyword argument is refused."""
    if "checkpoint_during" in kwargs:
        deprecated_since(LangGraphDeprecatedSinceV10, "`checkpoint_during` is deprecated and will "
                         "be removed. Please use `durability` instead.", stacklevel=3)
        during = kwargs.pop("checkpoint_during")
        if durability is None:
            durability = "async" if during else "exit"
    if kwargs:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    return durability


def _raise_nested_interrupt(loop: RunLoop) -> None:
    """A drained run raises ``GraphDrained``; a subgraph that paused (``interrupt()`` or a
    breakpoint) pauses its parent's task."""
    if loop.status == "draining":
        _raise_drained(loop)
    if loop.parent_task is not None and loop.paused:
        raise GraphInterrupt(tuple(loop.interrupts))


def _raise_drained(loop: RunLoop) -> None:
    control = loop.control
    raise GraphDrained((control.drain_reason if control is not None else None) or "shutdown")


def _result(loop: RunLoop, version: str, run: _Run) -> Any:
    _raise_nested_interrupt(loop)
    if version == "v2":
        from stepgraph.stream.typed_v2 import typed

        value = loop.read(loop.output_keys)
        if run.maps is not None:
            value = typed("values", value, run.maps)
        return GraphOutput(value, tuple(loop.interrupts))
    out = loop.output()
    return out


__all__ = ["INTERRUPT", "PregelAPI"]
