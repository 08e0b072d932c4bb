"""The run API of a compiled graph: ``invoke``/``stream`` and their async twins.

Both twins build the same ``RunLoop`` (``_prepare``) and shape the same stream parts;
only the driver differs (threads vs. the event loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

from typing_extensions import Unpack

from stepgraph._running import current_task
from stepgraph.config import RunnableConfig, ensure_config, with_run_metadata
from stepgraph.constants import INTERRUPT
from stepgraph.engine.driver_sync import drive_sync
from stepgraph.engine.loop import RunLoop
from stepgraph.engine.subgraph import child_config, runs_on_its_own
from stepgraph.engine.taskconfig import DURABILITY_KEY, RUNTIME_KEY
from stepgraph.engine.timetravel import root_config
from stepgraph.engine.tracing import RunTracer, tracing_requested
from stepgraph.errors import (
    GraphDrained,
    GraphInterrupt,
    UnsupportedArgumentError,
    refuse_kwargs,
)
from stepgraph.pregel.setup import resolve_checkpointer, resolve_context
from stepgraph.runtime import RunControl, Runtime
from stepgraph.stream.output import normalize_modes, shape
from stepgraph.stream.sink import ForwardingSink, StreamSink
from stepgraph.types import All, Command, Durability, GraphOutput, StreamMode
from stepgraph.typing import ContextT, DeprecatedKwargs, InputT, OutputT, StateT
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel


class _Run:
    __slots__ = ("loop", "single", "subgraphs", "version", "live", "maps", "modes", "printed")

    def __init__(self, loop: RunLoop, single: bool, subgraphs: bool, version: str, live: bool,
                 modes: frozenset[str], printed: frozenset[str]) -> None:
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
            from stepgraph.stream.typed_v2 import mappers

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


class PregelAPI(Generic[StateT, ContextT, InputT, OutputT]):
    """Mixin with the public run methods of ``Pregel``.

    Parameters are typed as LangGraph types them. Keyword arguments beyond these are refused
    (``UnsupportedArgumentError``, SG311), except LangGraph's deprecated ``checkpoint_during``
    (mapped onto ``durability``, with a warning).
    """

    def _prepare(
        self: Pregel,  # type: ignore[misc]
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
    ) -> _Run:
        _check_version(version)
        _check_durability(durability)
        parent = current_task()
        if parent is not None:
            if runs_on_its_own(parent, self.config) or runs_on_its_own(parent, config):
                parent = None
            else:
                config = child_config(self, parent, ensure_config(self.config, config))
        if parent is None:
            config = root_config(with_run_metadata(ensure_config(self.config, config)))
        assert config is not None
        if values_only:
            modes, single = [], True
        else:
            modes, single = normalize_modes(stream_mode, default_mode or self.stream_mode)
        printed = frozenset(
            ("updates", "values") if (debug if debug is not None else self.debug)
            else normalize_modes(print_mode, "values")[0]
        )
        mode_set = frozenset(modes) | printed
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
        return _Run(loop, single, subgraphs, version, live, frozenset(modes), printed)

    # -- composition with langchain-core runnables ------------------------------------------
    def __or__(self, other: Any) -> Any:
        from stepgraph.pregel.runnable import compose

        return compose(self, other)

    def __ror__(self, other: Any) -> Any:
        from stepgraph.pregel.runnable import compose

        return compose(other, self)

    # -- sync ---------------------------------------------------------------------------------
    def stream(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> Iterator[dict[str, Any] | Any]:
        """Run the graph, yielding what ``stream_mode`` asks for after each step or task.

        One mode (a string) yields its payloads; a list yields ``(mode, payload)``;
        ``subgraphs=True`` prefixes the namespace tuple. ``print_mode`` modes are printed
        (``[mode] payload``) and yielded only if ``stream_mode`` has them too; ``debug=True``
        (or the graph's ``debug``) prints ``updates`` and ``values``. ``control`` is a
        ``RunControl`` whose ``request_drain()`` stops the run at the next step
        (``GraphDrained``).
        """
        run = self._prepare(
            input, config, stream_mode=stream_mode, print_mode=print_mode, debug=debug,
            output_keys=output_keys, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, durability=_durability(durability, kwargs, "stream"),
            subgraphs=subgraphs, context=context, version=version, control=control,
        )
        streaming = run.loop.parent_task is None
        for part in drive_sync(run.loop, live=run.live, streaming=streaming):
            if run.echo(part):
                yield run.shape(part)
        _raise_nested_interrupt(run.loop)

    def _stream_parts(self, input: Any, config: RunnableConfig | None, options: Mapping[str, Any],
                      where: str) -> Iterator[tuple[tuple[str, ...], str, Any]]:
        """Raw ``(namespace, mode, payload)`` parts of a run given ``stream``'s keyword
        arguments as ``options`` (the event streams use them)."""
        run = self._prepare(input, config, **_run_options(options, where))
        streaming = run.loop.parent_task is None
        yield from drive_sync(run.loop, live=run.live, streaming=streaming)
        _raise_nested_interrupt(run.loop)

    @overload
    def invoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v2"],
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> GraphOutput[OutputT] | list[dict[str, Any]]: ...

    @overload
    def invoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v1"] = ...,
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> dict[str, Any] | Any: ...

    def invoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> dict[str, Any] | Any:
        """Run the graph to the end and return its output (the final state by default;
        ``version="v2"``: a ``GraphOutput``). Another ``stream_mode`` returns the list of
        its parts. ``subgraphs`` is accepted as ``stream`` takes it; it does not change what
        is returned. ``print_mode``/``debug`` print parts as ``stream`` does.
        """
        durability = _durability(durability, kwargs, "invoke")
        if stream_mode == "values":
            run = self._prepare(
                input, config, stream_mode=None, print_mode=print_mode, debug=debug,
                output_keys=output_keys, interrupt_before=interrupt_before,
                interrupt_after=interrupt_after, durability=durability, context=context,
                values_only=True, control=control, version=version,
            )
            for part in drive_sync(run.loop):
                run.echo(part)
            return _result(run.loop, version, run)
        return list(
            self.stream(
                input, config, context=context, stream_mode=stream_mode, print_mode=print_mode,
                output_keys=output_keys, interrupt_before=interrupt_before,
                interrupt_after=interrupt_after, durability=durability, version=version,
                control=control, debug=debug,
            )
        )

    def batch(
        self,
        inputs: Sequence[InputT | Command | None],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """``invoke`` each input (with its config, when ``config`` is a list); with
        ``return_exceptions`` an input whose run raised gives its exception."""
        configs = _configs(config, len(inputs))
        out: list[Any] = []
        for i, c in zip(inputs, configs, strict=True):
            try:
                out.append(self.invoke(i, c, **kwargs))
            except Exception as exc:
                if not return_exceptions:
                    raise
                out.append(exc)
        return out

    # -- async --------------------------------------------------------------------------------
    async def astream(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> AsyncIterator[dict[str, Any] | Any]:
        """Async twin of ``stream``."""
        run = self._prepare(
            input, config, stream_mode=stream_mode, print_mode=print_mode, debug=debug,
            output_keys=output_keys, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, durability=_durability(durability, kwargs, "astream"),
            subgraphs=subgraphs, context=context, version=version, control=control,
        )
        # closed at once when the consumer stops early: the step's tasks are cancelled now
        async with aclosing(_drive_async(run.loop)) as parts:
            async for part in parts:
                if run.echo(part):
                    yield run.shape(part)
        _raise_nested_interrupt(run.loop)

    async def _astream_parts(self, input: Any, config: RunnableConfig | None,
                             options: Mapping[str, Any],
                             where: str) -> AsyncIterator[tuple[tuple[str, ...], str, Any]]:
        """Async twin of ``_stream_parts``."""
        run = self._prepare(input, config, **_run_options(options, where))
        async with aclosing(_drive_async(run.loop)) as parts:
            async for part in parts:
                yield part
        _raise_nested_interrupt(run.loop)

    @overload
    async def ainvoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v2"],
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> GraphOutput[OutputT] | list[dict[str, Any]]: ...

    @overload
    async def ainvoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v1"] = ...,
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> dict[str, Any] | Any: ...

    async def ainvoke(
        self,
        input: InputT | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: ContextT | None = None,
        stream_mode: StreamMode = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: All | Sequence[str] | None = None,
        interrupt_after: All | Sequence[str] | None = None,
        durability: Durability | None = None,
        control: RunControl | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> dict[str, Any] | Any:
        """Async twin of ``invoke``."""
        durability = _durability(durability, kwargs, "ainvoke")
        if stream_mode == "values":
            run = self._prepare(
                input, config, stream_mode=None, print_mode=print_mode, debug=debug,
                output_keys=output_keys, interrupt_before=interrupt_before,
                interrupt_after=interrupt_after, durability=durability, context=context,
                values_only=True, control=control, version=version,
            )
            async for part in _drive_async(run.loop):
                run.echo(part)
            return _result(run.loop, version, run)
        return [
            chunk
            async for chunk in self.astream(
                input, config, context=context, stream_mode=stream_mode, print_mode=print_mode,
                output_keys=output_keys, interrupt_before=interrupt_before,
                interrupt_after=interrupt_after, durability=durability, version=version,
                control=control, debug=debug,
            )
        ]

    async def abatch(
        self,
        inputs: Sequence[InputT | Command | None],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async twin of ``batch`` (the runs go concurrently)."""
        import asyncio

        configs = _configs(config, len(inputs))
        return list(await asyncio.gather(
            *(self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True)),
            return_exceptions=return_exceptions,
        ))


_RUN_OPTIONS = frozenset({
    "context", "stream_mode", "print_mode", "output_keys", "interrupt_before", "interrupt_after",
    "durability", "control", "subgraphs", "debug", "version",
})


def _run_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``stream``'s keyword arguments as ``_prepare`` takes them; others refused (SG311)."""
    out = {k: v for k, v in options.items() if k in _RUN_OPTIONS}
    rest = {k: v for k, v in options.items() if k not in _RUN_OPTIONS}
    out["durability"] = _durability(out.get("durability"), rest, where)
    out.setdefault("stream_mode", None)
    return out


def _drive_async(loop: RunLoop) -> AsyncIterator[tuple[tuple[str, ...], str, Any]]:
    """The async driver, imported on the first async run (``import stepgraph`` stays free
    of asyncio)."""
    from stepgraph.engine.driver_async import drive_async

    return drive_async(loop)


def _configs(config: RunnableConfig | Sequence[RunnableConfig] | None,
             n: int) -> list[RunnableConfig | None]:
    if isinstance(config, Sequence) and not isinstance(config, Mapping):
        return list(config)
    return [config] * n


def print_part(ns: tuple[str, ...], mode: str, payload: Any, subgraphs: bool) -> None:
    """A ``print_mode`` part on stdout as LangGraph prints it: ``[mode]`` in bold, the
    subgraph namespace in yellow (when streaming subgraphs), then ``repr(payload)``."""
    head = f"\033[1m[{mode}]\033[0m"
    if subgraphs and ns:
        head += f" \033[1;33m[graph={ns}]\033[0m"
    print(f"{head} {payload!r}")


_VERSIONS = ("v1", "v2")
_DURABILITIES = ("sync", "async", "exit")


def _check_version(version: str) -> None:
    if version not in _VERSIONS:
        raise UnsupportedArgumentError(
            f"version={version!r} is not a stream/invoke version.", code="SG312",
            hint="use version='v1' (LangGraph's default) or 'v2' (typed parts, GraphOutput)",
        )


def _check_durability(durability: str | None) -> None:
    if durability is not None and durability not in _DURABILITIES:
        raise UnsupportedArgumentError(
            f"durability={durability!r} is not a durability mode.", code="SG312",
            hint="use 'sync', 'async' or 'exit' (or leave it None)",
        )


def _config_runtime(config: Any) -> Any:
    """A ``Runtime`` a root run's config carries (LangGraph's ``__pregel_runtime`` key: code
    that patches the store or context of a run it starts puts one there), else ``None``."""
    runtime = (config.get("configurable") or {}).get(RUNTIME_KEY)
    return runtime if isinstance(runtime, Runtime) else None


def _durability(durability: Durability | None, kwargs: Mapping[str, Any],
                where: str) -> Durability | None:
    """``durability``, or the deprecated ``checkpoint_during`` mapped onto it; any other
    keyword argument is refused (SG311)."""
    kwargs = dict(kwargs)
    if "checkpoint_during" in kwargs:
        deprecated_since(LangGraphDeprecatedSinceV10, "`checkpoint_during` is deprecated and will "
                         "be removed. Please use `durability` instead.", stacklevel=3)
        during = kwargs.pop("checkpoint_during")
        if durability is None:
            durability = "async" if during else "exit"
    refuse_kwargs(f"{where}()", kwargs,
                  "LangGraph's run arguments are all named parameters; stepgraph takes no others")
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
