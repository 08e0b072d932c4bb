"""``StateGraph``: define nodes over a shared typed state, connect them, then ``compile()``."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, get_args, get_origin

from typing_extensions import Unpack

from stepgraph._collector import paused
from stepgraph._introspect import derived, type_hints
from stepgraph._logs import LazyLogger
from stepgraph.constants import END, NS_END, NS_SEP, START
from stepgraph.engine.callable import callable_name, coerce_callable
from stepgraph.errors import GraphDefinitionError, refuse_kwargs
from stepgraph.graph.branch import BranchSpec
from stepgraph.graph.compile import compile_graph
from stepgraph.graph.state_schema import (
    SchemaInfo,
    input_schema_of,
    merge_channel,
    read_input_schema,
)
from stepgraph.graph.validate import validate_builder
from stepgraph.types import All, Checkpointer, Command, TimeoutPolicy
from stepgraph.typing import ContextT, DeprecatedKwargs, InputT, OutputT, StateT
from stepgraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    deprecated_since,
)

logger = LazyLogger(__name__)

if TYPE_CHECKING:
    from stepgraph.cache.base import BaseCache
    from stepgraph.graph.compile import CompiledStateGraph
    from stepgraph.store.base import BaseStore

__all__ = ["StateGraph", "StateNodeSpec"]


class StateNodeSpec:
    """A node as declared: its body, input schema and policies."""

    __slots__ = ("runnable", "metadata", "input_schema", "retry_policy", "cache_policy", "ends",
                 "defer", "timeout", "error_handler", "raw", "trace_policy")

    def __init__(self, *, runnable: Any = None, metadata: Any = None, input_schema: Any = None,
                 retry_policy: Any = None, cache_policy: Any = None, ends: Any = None,
                 defer: Any = None, timeout: Any = None, error_handler: Any = None,
                 raw: Any = None, trace_policy: Any = None) -> None:
        self.runnable = runnable
        self.metadata = metadata
        self.input_schema = input_schema
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.ends = ends
        self.defer = defer
        self.timeout = timeout
        self.error_handler = error_handler
        self.raw = raw
        self.trace_policy = trace_policy


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A graph whose nodes read and update one shared state.

    Each state key is a channel: plain keys keep the last value written, keys annotated
    ``Annotated[T, reducer]`` fold every write with the reducer.

    Example:
        >>> from typing import TypedDict
        >>> class S(TypedDict):
        ...     x: int
        >>> g = StateGraph(S)
        >>> _ = g.add_node("inc", lambda s: {"x": s["x"] + 1})
        >>> _ = g.add_edge(START, "inc")
        >>> g.compile().invoke({"x": 1})
        {'x': 2}
    """

    def __init__(
        self,
        state_schema: type[StateT] | None = None,
        context_schema: type[ContextT] | None = None,
        *,
        input_schema: type[InputT] | None = None,
        output_schema: type[OutputT] | None = None,
        **kwargs: Any,
    ) -> None:
        if "config_schema" in kwargs:
            deprecated_since(LangGraphDeprecatedSinceV10, "`config_schema` is deprecated and will "
                             "be removed. Please use `context_schema` instead.")
            context_schema = context_schema or kwargs.pop("config_schema")
        for old, new in (("input", "input_schema"), ("output", "output_schema")):
            if old in kwargs:
                deprecated_since(LangGraphDeprecatedSinceV05, f"`{old}` is deprecated and will be "
                                 f"removed. Please use `{new}` instead.")
        input_schema = input_schema or kwargs.pop("input", None)
        output_schema = output_schema or kwargs.pop("output", None)
        _refuse_unknown("StateGraph()", kwargs)
        if state_schema is None:
            if input_schema is None or output_schema is None:
                raise GraphDefinitionError(
                    "Must provide state_schema or input and output", code="SG109"
                )
            state_schema = input_schema  # type: ignore[assignment]
        self.nodes: dict[str, StateNodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.branches: dict[str, dict[str, BranchSpec]] = {}
        self.schemas: dict[Any, SchemaInfo] = {}
        self.channels: dict[str, Any] = {}
        self.managed: dict[str, Any] = {}
        self.compiled = False
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self._node_defaults: dict[str, Any] = {}
        self._add_schema(self.state_schema)
        self._add_schema(self.input_schema, allow_managed=False)
        self._add_schema(self.output_schema, allow_managed=False)

    def _add_schema(self, schema: Any, *, allow_managed: bool = True) -> SchemaInfo:
        info = self.schemas.get(schema)
        if info is not None:
            return info
        info = SchemaInfo(schema)
        if info.managed and not allow_managed:
            kind = "Input" if schema is self.input_schema else "Output"
            raise ValueError(
                f"Invalid managed channels detected in {kind}Schema: {', '.join(info.managed)}. "
                "Managed channels are not permitted in Input/Output schema."
            )
        self.schemas[schema] = info
        for key, channel in info.channels.items():
            if key in self.managed:
                raise ValueError(f"Managed value '{key}' already exists with a different type")
            merge_channel(self.channels, key, channel)
        for key, kind in info.managed.items():
            if key in self.managed and self.managed[key] is not kind:
                raise ValueError(f"Managed value '{key}' already exists with a different type")
            self.managed[key] = kind
        return info

    # -- nodes ------------------------------------------------------------------------------
    def add_node(
        self,
        node: str | Callable[..., Any] | Any,
        action: Any = None,
        *,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        input_schema: Any = None,
        retry_policy: Any = None,
        cache_policy: Any = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        timeout: Any = None,
        error_handler: Any = None,
        trace_policy: Any = None,
        **kwargs: Any,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add a node; the name defaults to the function's name. Returns the graph.

        ``trace_policy`` (a ``TracePolicy``) changes what tracers record for the node's runs.
        """
        if kwargs:  # LangGraph's deprecated spellings; anything else is refused
            input_schema, retry_policy = _legacy_node_kwargs(kwargs, input_schema, retry_policy)
        if not isinstance(node, str):
            action, name = node, callable_name(node)
        else:
            name = node
            if action is None:
                raise GraphDefinitionError(
                    f"Node `{name}` has no action.", code="SG104",
                    hint="add_node(name, function) or add_node(function)",
                )
        if self.compiled:
            logger.warning("Adding a node to a graph that has already been compiled. "
                           "This will not be reflected in the compiled graph.")
        if name in self.nodes:
            raise ValueError(f"Node `{name}` already present.")
        if name in (END, START):
            raise ValueError(f"Node `{name}` is reserved.")
        for ch in (NS_SEP, NS_END):
            if ch in name:
                raise ValueError(f"'{ch}' is a reserved character and is not allowed in the node names.")
        runnable = coerce_callable(action, name)
        ends: Any = destinations
        if input_schema is None and ends is None:
            input_schema, ends = _node_facts(action)
        elif input_schema is None:
            input_schema = input_schema_of(action)
        elif ends is None:
            ends = _command_ends(action)
        if input_schema is not None and input_schema not in self.schemas:
            self._add_schema(input_schema)

        self.nodes[name] = StateNodeSpec(
            runnable=runnable, metadata=metadata, input_schema=input_schema or self.state_schema,
            retry_policy=retry_policy, cache_policy=cache_policy, ends=ends, defer=defer,
            timeout=None if timeout is None else TimeoutPolicy.coerce(timeout),
            error_handler=error_handler, raw=action, trace_policy=trace_policy,
        )
        return self

    def set_node_defaults(self, *, retry_policy: Any = None, cache_policy: Any = None,
                          error_handler: Any = None, timeout: Any = None) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Graph-wide policies applied at compile time to nodes that set none."""
        self._node_defaults = {
            "retry_policy": retry_policy, "cache_policy": cache_policy,
            "error_handler": error_handler, "timeout": timeout,
        }
        return self

    # -- edges ------------------------------------------------------------------------------
    def add_edge(self, start_key: str | list[str], end_key: str) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Run ``end_key`` after ``start_key``; a list of starts waits for all of them."""
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.add((start_key, end_key))
            return self
        for start in start_key:
            if start == END:
                raise ValueError("END cannot be a start node")
            if start not in self.nodes:
                raise ValueError(f"Need to add_node `{start}` first")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        if end_key != END and end_key not in self.nodes:
            raise ValueError(f"Need to add_node `{end_key}` first")
        self.waiting_edges.add((tuple(start_key), end_key))
        return self

    def add_conditional_edges(
        self, source: str, path: Callable[..., Any], path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """After ``source``, call ``path(state)`` and go where it says (names or ``Send``s)."""
        spec = BranchSpec(path, path_map, input_schema_of(path))
        if spec.input_schema is not None:
            self._add_schema(spec.input_schema)
        existing = self.branches.setdefault(source, {})
        if spec.name in existing:
            raise ValueError(f"Branch with name `{spec.name}` already exists for node `{source}`")
        existing[spec.name] = spec
        return self

    def add_sequence(self, nodes: Sequence[Any]) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add ``nodes`` (functions or ``(name, function)``) chained by edges."""
        if len(nodes) < 1:
            raise ValueError("Sequence requires at least one node.")
        previous: str | None = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (callable_name(item), item)
            if name in self.nodes:
                raise ValueError(f"Node names must be unique: node with the name '{name}' already exists.")
            self.add_node(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable[..., Any], path_map: Any = None) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        return self.add_edge(key, END)

    # -- compile ----------------------------------------------------------------------------
    def validate(self, interrupt: Sequence[str] | None = None) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        validate_builder(self, interrupt)
        return self

    def compile(
        self,
        checkpointer: Checkpointer = None,
        *,
        cache: BaseCache[Any] | None = None,
        store: BaseStore | None = None,
        interrupt_before: All | list[str] | None = None,
        interrupt_after: All | list[str] | None = None,
        debug: bool = False,
        name: str | None = None,
        transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
        **kwargs: Unpack[DeprecatedKwargs],
    ) -> CompiledStateGraph[StateT, ContextT, InputT, OutputT]:
        """Validate and build the runnable graph (a ``CompiledStateGraph``). ``transformers``:
        stream transformer factories of its ``stream_events(version="v3")`` runs. Any other
        keyword argument is refused (``UnsupportedArgumentError``, SG311)."""
        refuse_kwargs("compile()", kwargs)
        with paused():  # (every object it makes lives as long as the graph)
            graph = compile_graph(
                self, checkpointer=checkpointer, cache=cache, store=store,
                interrupt_before=interrupt_before, interrupt_after=interrupt_after, debug=debug,
                name=name,
            )
        if transformers:
            graph.stream_transformers = tuple(transformers)
        return graph


def _legacy_node_kwargs(kwargs: dict[str, Any], input_schema: Any, retry_policy: Any) -> tuple[Any, Any]:
    """``add_node``'s ``input``/``retry`` (deprecated, with a warning) folded into
    ``input_schema``/``retry_policy``; any other keyword argument is a ``TypeError``."""
    for old, new in (("input", "input_schema"), ("retry", "retry_policy")):
        if old in kwargs:
            deprecated_since(LangGraphDeprecatedSinceV05, f"`{old}` is deprecated and will be "
                             f"removed. Please use `{new}` instead.", stacklevel=3)
    if input_schema is None:
        input_schema = kwargs.pop("input", None)
    if retry_policy is None:
        retry_policy = kwargs.pop("retry", None)
    _refuse_unknown("add_node()", kwargs, ("input", "retry"))
    return input_schema, retry_policy


def _refuse_unknown(where: str, kwargs: dict[str, Any], handled: tuple[str, ...] = ()) -> None:
    refuse_kwargs(where, {k: v for k, v in kwargs.items() if k not in handled})


def _node_facts(action: Any) -> tuple[Any, tuple[str, ...] | None]:
    """``(input_schema_of(action), _command_ends(action))`` in one remembered lookup (the
    usual ``add_node``); if either fails, each is read on its own (a failure gives ``None``
    and is not remembered)."""
    try:
        return derived(action, _schema_and_targets)
    except Exception:
        return input_schema_of(action), _command_ends(action)


def _schema_and_targets(action: Any) -> tuple[Any, tuple[str, ...] | None]:
    return read_input_schema(action), _command_targets(action)


def _command_ends(action: Any) -> tuple[str, ...] | None:
    try:
        return derived(action, _command_targets)
    except Exception:  # not remembered: a forward reference may resolve later
        return None


def _command_targets(action: Any) -> tuple[str, ...] | None:
    """The ``Literal`` destinations of a ``Command[Literal[...]]`` return annotation."""
    hint = type_hints(action).get("return")
    if hint is None or get_origin(hint) is not Command:
        return None
    args = get_args(hint)
    if args and get_origin(args[0]) is Literal:
        return tuple(get_args(args[0]))
    return None
