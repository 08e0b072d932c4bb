"""Preparing and driving one run of a compiled graph (what ``pregel/api.py``'s methods do).

Imported on a graph's first run, not by ``import stepgraph.graph``: defining and compiling a
graph needs none of the engine's run-time modules (loop, drivers, runner, saving, tracing).
Both twins build the same ``RunLoop`` (``prepare``) and shape the same stream parts; only
the driver differs (threads vs. the event loop).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from stepgraph._running import current_task
from stepgraph.config import RunnableConfig, ensure_config, with_run_metadata
from stepgraph.engine.driver_sync import drive_sync
from stepgraph.engine.loop import RunLoop
from stepgraph.engine.subgraph import child_config, runs_on_its_own
from stepgraph.engine.taskconfig import DURABILITY_KEY, RUNTIME_KEY
from stepgraph.engine.timetravel import root_config
from stepgraph.engine.tracing import tracing_requested
from stepgraph.errors import GraphDrained, GraphInterrupt, UnsupportedArgumentError
from stepgraph.pregel.setup import resolve_checkpointer, resolve_context
from stepgraph.runtime import RunControl, Runtime
from stepgraph.stream.output import normalize_modes, shape
from stepgraph.stream.sink import ForwardingSink, StreamSink
from stepgraph.stream.typed_v2 import mappers, typed
from stepgraph.types import All, Durability, GraphOutput, StreamMode

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel

Part = tuple[tuple[str, ...], str, Any]


class Run:
    """One prepared run: its loop and how its parts are shaped, printed and yielded."""

    __slots__ = ("loop", "single", "subgraphs", "version", "live", "maps", "modes", "printed")

    def __init__(
        self,
        loop: RunLoop,
        single: bool,
        subgraphs: bool,
        version: str,
        live: bool,
        modes: frozenset[str],
        printed: frozenset[str],
    ) -> None:
        self.loop = loop
        self.single = single
        self.subgraphs = subgraphs
        self.version = version
        self.live = live
        self.modes = modes
        """The modes the caller streams (``printed`` ones only are printed, not yielded)."""
        self.printed = printed
        self.maps: Any = None
        if version == "v2":
            maps = mappers(loop.graph)
            self.maps = maps if maps != (None, None) else None

    def shape(self, part: Any) -> Any:
        return shape(part, self.single, self.subgraphs, self.version, self.maps)

    def echo(self, part: Any) -> bool:
        """Print ``part`` if its mode is a ``print_mode``; whether the caller streams it."""
        ns, mode, payload = part
        if mode in self.printed:
            print_part(ns, mode, payload, self.subgraphs)
        return mode in self.modes


_DEBUG_PRINTED = frozenset(("updates", "values"))
_NOTHING: frozenset[str] = frozenset()


def prepare(
    graph: Pregel,
    input: Any,
    config: RunnableConfig | None,
    *,
    stream_mode: StreamMode | Sequence[StreamMode] | None,
    print_mode: StreamMode | Sequence[StreamMode] = (),
    debug: bool | None = None,
    output_keys: str | Sequence[str] | None = None,
    interrupt_before: All | Sequence[str] | None = None,
    interrupt_after: All | Sequence[str] | None = None,
    durability: Durability | None = None,
    subgraphs: bool = False,
    context: Any = None,
    version: str = "v1",
    default_mode: str | None = None,
    values_only: bool = False,
    control: RunControl | None = None,
) -> Run:
    """The ``RunLoop`` of one call (a root run, or a child of the running task) with its
    stream sink, saver, context, durability and tracer."""
    check_version(version)
    cfg: Any = config
    check_durability(durability)
    parent = current_task()
    if parent is not None:
        if runs_on_its_own(parent, graph.config) or runs_on_its_own(parent, cfg):
            parent = None
        else:
            merged: Any = ensure_config(graph.config, cfg)
            cfg = child_config(graph, parent, merged)
    if parent is None:
        tagged: Any = with_run_metadata(ensure_config(graph.config, cfg))
        cfg = root_config(tagged)
    if values_only:
        modes: list[str] = []
        single = True
    else:
        modes, single = normalize_modes(stream_mode, default_mode or graph.stream_mode)
    if debug if debug is not None else graph.debug:
        printed = _DEBUG_PRINTED
    elif type(print_mode) is tuple and not print_mode:  # (the default: print nothing)
        printed = _NOTHING
    else:
        printed = frozenset(normalize_modes(print_mode, "values")[0])
    mode_set = frozenset(modes) | printed
    sink: StreamSink
    if parent is not None and parent.run.sink.subgraphs:
        ns = cfg["configurable"]["checkpoint_ns"]
        sink = ForwardingSink(
            parent.run.sink, mode_set, tuple(ns.split("|")) if ns else (), local_subgraphs=subgraphs
        )
    elif parent is not None:
        ns = cfg["configurable"]["checkpoint_ns"]
        sink = StreamSink(mode_set, subgraphs=subgraphs, base=tuple(ns.split("|")) if ns else ())
    else:
        sink = StreamSink(mode_set, subgraphs=subgraphs)
    saver = resolve_checkpointer(graph, cfg, parent)
    loop = RunLoop(
        graph,
        input,
        cfg,
        sink=sink,
        output_keys=output_keys if output_keys is not None else graph.output_channels,
        stream_keys=output_keys if output_keys is not None else graph.stream_keys,
        interrupt_before=interrupt_before
        if interrupt_before is not None
        else graph.interrupt_before_nodes,
        interrupt_after=interrupt_after
        if interrupt_after is not None
        else graph.interrupt_after_nodes,
        checkpointer=saver,
        store=graph.store,
        context=resolve_context(graph, context),
        durability=durability or cfg["configurable"].get(DURABILITY_KEY) or "async",
        runtime=parent.runtime if parent is not None else _config_runtime(cfg),
        control=control
        if control is not None
        else (parent.runtime.control if parent is not None else None),
        parent_task=parent,
        traced=tracing_requested(cfg),
    )
    live = (bool({"custom", "messages"} & mode_set) or graph.stream_eager) and parent is None
    return Run(loop, single, subgraphs, version, live, frozenset(modes), printed)


def sync_parts(run: Run) -> Iterator[Part]:
    """The run's raw parts, driven in this thread (and the pool)."""
    yield from drive_sync(run.loop, live=run.live, streaming=run.loop.parent_task is None)
    raise_nested_interrupt(run.loop)


async def async_parts(run: Run) -> AsyncIterator[Part]:
    """The run's raw parts, driven on the event loop; closed at once when the consumer stops
    early, so the step's tasks are cancelled then."""
    async with aclosing(_drive_async(run.loop)) as parts:
        async for part in parts:
            yield part
    raise_nested_interrupt(run.loop)


def run_to_end(run: Run) -> Any:
    """``invoke``: drive the run, printing its ``print_mode`` parts; its output."""
    for part in drive_sync(run.loop):
        run.echo(part)
    return _result_of(run.loop, run.version, run)


async def arun_to_end(run: Run) -> Any:
    """``ainvoke``: async twin of ``run_to_end`` (on one worker thread when the run's work
    is all sync, ``engine/driver_thread.py``)."""
    await _async_driver().drive_to_end(run.loop, run.echo)
    return _result_of(run.loop, run.version, run)


def _drive_async(loop: RunLoop) -> AsyncGenerator[Part, None]:
    return cast("AsyncGenerator[Part, None]", _async_driver().drive_async(loop))


def _async_driver() -> Any:
    """The async driver, imported on the first async run (sync programs never load asyncio)."""
    # lazy: asyncio, async runs only
    from stepgraph.engine import driver_async

    return driver_async


def print_part(ns: tuple[str, ...], mode: str, payload: Any, subgraphs: bool) -> None:
    """A ``print_mode`` part on stdout as LangGraph prints it: ``[mode]`` in bold, the
    subgraph namespace in yellow (when streaming subgraphs), then ``repr(payload)``."""
    head = f"\033[1m[{mode}]\033[0m"
    if subgraphs and ns:
        head += f" \033[1;33m[graph={ns}]\033[0m"
    print(f"{head} {payload!r}")


_VERSIONS = ("v1", "v2")
_DURABILITIES = ("sync", "async", "exit")


def check_version(version: str) -> None:
    if version not in _VERSIONS:
        raise UnsupportedArgumentError(
            f"version={version!r} is not a stream/invoke version.",
            code="SG312",
            hint="use version='v1' (LangGraph's default) or 'v2' (typed parts, GraphOutput)",
        )


def check_durability(durability: str | None) -> None:
    if durability is not None and durability not in _DURABILITIES:
        raise UnsupportedArgumentError(
            f"durability={durability!r} is not a durability mode.",
            code="SG312",
            hint="use 'sync', 'async' or 'exit' (or leave it None)",
        )


def _config_runtime(config: Any) -> Any:
    """A ``Runtime`` a root run's config carries (LangGraph's ``__pregel_runtime`` key: code
    that patches the store or context of a run it starts puts one there), else ``None``."""
    configurable = config.get("configurable")
    runtime = configurable.get(RUNTIME_KEY) if configurable else None
    return runtime if runtime is not None and isinstance(runtime, Runtime) else None


def raise_nested_interrupt(loop: RunLoop) -> None:
    """A drained run raises ``GraphDrained``; a subgraph that paused (``interrupt()`` or a
    breakpoint) pauses its parent's task."""
    if loop.status == "draining":
        _raise_drained(loop)
    if loop.parent_task is not None and loop.paused:
        raise GraphInterrupt(tuple(loop.interrupts))


def _raise_drained(loop: RunLoop) -> None:
    control = loop.control
    raise GraphDrained((control.drain_reason if control is not None else None) or "shutdown")


def _result_of(loop: RunLoop, version: str, run: Run) -> Any:
    raise_nested_interrupt(loop)
    if version == "v2":
        value = loop.read(loop.output_keys)
        if run.maps is not None:
            value = typed("values", value, run.maps)
        return GraphOutput(value, tuple(loop.interrupts))
    out = loop.output()
    return out
