"""The run API of a compiled graph: ``invoke``/``stream``, their async twins and ``batch``.

The signatures are LangGraph's; the bodies hand over to ``pregel/_run.py`` (prepare the
``RunLoop``, drive it, shape its parts), which is imported on the first run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Generic, Literal, cast, overload

from typing_extensions import Unpack

from stepgraph.config import RunnableConfig
from stepgraph.constants import INTERRUPT
from stepgraph.errors import refuse_kwargs
from stepgraph.runtime import RunControl
from stepgraph.types import All, Command, Durability, GraphOutput, StreamMode
from stepgraph.typing import ContextT, DeprecatedKwargs, InputT, OutputT, StateT
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

if TYPE_CHECKING:
    from stepgraph.pregel._run import Part


class PregelAPI(Generic[StateT, ContextT, InputT, OutputT]):
    """Mixin with the public run methods of ``Pregel``.

    Parameters are typed as LangGraph types them. Keyword arguments beyond these are refused
    (``UnsupportedArgumentError``, SG311), except LangGraph's deprecated ``checkpoint_during``
    (mapped onto ``durability``, with a warning).
    """

    # -- composition with langchain-core runnables ------------------------------------------
    def __or__(self, other: Any) -> Any:
        # lazy: langchain-core composition
        from stepgraph.pregel.runnable import compose

        return compose(self, other)

    def __ror__(self, other: Any) -> Any:
        # lazy: langchain-core composition
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
        runs = _runs()
        run = runs.prepare(
            self,
            input,
            config,
            stream_mode=stream_mode,
            print_mode=print_mode,
            debug=debug,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=_durability(durability, kwargs, "stream"),
            subgraphs=subgraphs,
            context=context,
            version=version,
            control=control,
        )
        for part in runs.sync_parts(run):
            if run.echo(part):
                yield run.shape(part)

    def _stream_parts(
        self, input: Any, config: RunnableConfig | None, options: Mapping[str, Any], where: str
    ) -> Iterator[Part]:
        """Raw ``(namespace, mode, payload)`` parts of a run given ``stream``'s keyword
        arguments as ``options`` (the event streams use them)."""
        runs = _runs()
        yield from runs.sync_parts(
            runs.prepare(self, input, config, **_run_options(options, where))
        )

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
            runs = _runs()
            return runs.run_to_end(
                runs.prepare(
                    self,
                    input,
                    config,
                    stream_mode=None,
                    print_mode=print_mode,
                    debug=debug,
                    output_keys=output_keys,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                    durability=durability,
                    context=context,
                    values_only=True,
                    control=control,
                    version=version,
                )
            )
        return list(
            self.stream(
                input,
                config,
                context=context,
                stream_mode=stream_mode,
                print_mode=print_mode,
                output_keys=output_keys,
                interrupt_before=interrupt_before,
                interrupt_after=interrupt_after,
                durability=durability,
                version=version,
                control=control,
                debug=debug,
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
        runs = _runs()
        run = runs.prepare(
            self,
            input,
            config,
            stream_mode=stream_mode,
            print_mode=print_mode,
            debug=debug,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=_durability(durability, kwargs, "astream"),
            subgraphs=subgraphs,
            context=context,
            version=version,
            control=control,
        )
        # closed at once when the consumer stops early: the step's tasks are cancelled now
        async with aclosing(runs.async_parts(run)) as parts:
            async for part in parts:
                if run.echo(part):
                    yield run.shape(part)

    async def _astream_parts(
        self, input: Any, config: RunnableConfig | None, options: Mapping[str, Any], where: str
    ) -> AsyncIterator[Part]:
        """Async twin of ``_stream_parts``."""
        runs = _runs()
        run = runs.prepare(self, input, config, **_run_options(options, where))
        async with aclosing(runs.async_parts(run)) as parts:
            async for part in parts:
                yield part

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
            runs = _runs()
            return await runs.arun_to_end(
                runs.prepare(
                    self,
                    input,
                    config,
                    stream_mode=None,
                    print_mode=print_mode,
                    debug=debug,
                    output_keys=output_keys,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                    durability=durability,
                    context=context,
                    values_only=True,
                    control=control,
                    version=version,
                )
            )
        return [
            chunk
            async for chunk in self.astream(
                input,
                config,
                context=context,
                stream_mode=stream_mode,
                print_mode=print_mode,
                output_keys=output_keys,
                interrupt_before=interrupt_before,
                interrupt_after=interrupt_after,
                durability=durability,
                version=version,
                control=control,
                debug=debug,
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
        return list(
            await asyncio.gather(
                *(self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True)),
                return_exceptions=return_exceptions,
            )
        )


_RUN_OPTIONS = frozenset(
    {
        "context",
        "stream_mode",
        "print_mode",
        "output_keys",
        "interrupt_before",
        "interrupt_after",
        "durability",
        "control",
        "subgraphs",
        "debug",
        "version",
    }
)


def _run_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``stream``'s keyword arguments as ``_run.prepare`` takes them; others refused (SG311)."""
    out = {k: v for k, v in options.items() if k in _RUN_OPTIONS}
    rest = {k: v for k, v in options.items() if k not in _RUN_OPTIONS}
    out["durability"] = _durability(out.get("durability"), rest, where)
    out.setdefault("stream_mode", None)
    return out


def _configs(
    config: RunnableConfig | Sequence[RunnableConfig] | None, n: int
) -> list[RunnableConfig | None]:
    if isinstance(config, Sequence) and not isinstance(config, Mapping):
        return list(config)
    return [cast("RunnableConfig | None", config)] * n


def _runs() -> Any:
    """``pregel/_run.py`` (it imports the engine's run-time modules): loaded when a graph
    is compiled (``load_run_modules``) or first run, so ``import stepgraph.graph`` stays
    lean."""
    global _RUN
    if _RUN is None:
        # lazy: the run-time modules, on the first run
        from stepgraph.pregel import _run

        _RUN = _run
    return _RUN


_RUN: Any = None
"""``pregel/_run.py`` once loaded."""


def load_run_modules() -> None:
    """Load the engine's run-time modules now (``compile`` does), so a graph's first run
    does not pay their import (LangGraph pays it when ``langgraph.graph`` is imported)."""
    _runs()


def _durability(
    durability: Durability | None, kwargs: Mapping[str, Any], where: str
) -> Durability | None:
    """``durability``, or the deprecated ``checkpoint_during`` mapped onto it; any other
    keyword argument is refused (SG311)."""
    if not kwargs:
        return durability
    kwargs = dict(kwargs)
    if "checkpoint_during" in kwargs:
        deprecated_since(
            LangGraphDeprecatedSinceV10,
            "`checkpoint_during` is deprecated and will "
            "be removed. Please use `durability` instead.",
            stacklevel=3,
        )
        during = kwargs.pop("checkpoint_during")
        if durability is None:
            durability = "async" if during else "exit"
    refuse_kwargs(
        f"{where}()",
        kwargs,
        "LangGraph's run arguments are all named parameters; stepgraph takes no others",
    )
    return durability


__all__ = ["INTERRUPT", "PregelAPI", "load_run_modules"]
