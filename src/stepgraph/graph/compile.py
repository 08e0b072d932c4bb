"""``StateGraph`` -> ``CompiledStateGraph``: channels, trigger channels and writers per node.

Each node ``n`` is triggered by ``branch:to:n`` (an ephemeral channel its predecessors
write) and by ``join:a+b:n`` barriers for waiting edges. A hidden ``__start__`` node maps
the input onto state keys. Routers run as writers of their source node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph._updates import update_as_tuples
from stepgraph.channels import (
    EphemeralValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from stepgraph.constants import BRANCH_PREFIX, END, JOIN_PREFIX, MISSING, ROOT, START, TAG_HIDDEN
from stepgraph.engine.callable import NodeFunction
from stepgraph.engine.node import PregelNode, Writer
from stepgraph.errors import InvalidUpdateError
from stepgraph.graph.branch import BranchWriter
from stepgraph.graph.jsonschema import state_jsonschema
from stepgraph.graph.state_schema import make_mapper
from stepgraph.graph.subgraph_find import find_subgraphs
from stepgraph.graph.writers import EdgeWriter, StartWriter, StateUpdateWriter
from stepgraph.pregel.api import load_run_modules
from stepgraph.pregel.main import Pregel
from stepgraph.pregel.schemas import schema_json
from stepgraph.types import TimeoutPolicy, ensure_valid_checkpointer
from stepgraph.typing import ContextT, InputT, OutputT, StateT

if TYPE_CHECKING:
    from stepgraph.graph.builder import StateGraph


class CompiledStateGraph(Pregel[StateT, ContextT, InputT, OutputT]):
    """A compiled ``StateGraph``: run it with ``invoke``/``stream``/``ainvoke``/``astream``."""

    builder: StateGraph

    def map_update(self, update: Any, *, source: str) -> list[tuple[str, Any]]:
        pairs = update_as_tuples(update)
        keys = self.state_keys
        out = []
        for key, value in pairs:
            if key not in keys:
                raise InvalidUpdateError(
                    f"{source} updates key '{key}', which the state does not have.",
                    code="SG205",
                    hint=f"state keys are {sorted(keys)}",
                )
            out.append((key, value))
        return out

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return self._state_jsonschema(self.builder.input_schema, "Input")

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return self._state_jsonschema(self.builder.output_schema, "Output")

    def _state_jsonschema(self, schema: Any, suffix: str) -> dict[str, Any]:
        keys = self.builder.schemas[schema].channels
        return state_jsonschema(schema, keys, self.builder.channels, self.get_name(suffix))

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        if self.builder.context_schema is None:
            return None
        return schema_json(self.builder.context_schema)


def compile_graph(
    builder: StateGraph,
    *,
    checkpointer: Any,
    cache: Any,
    store: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    debug: bool,
    name: str | None,
) -> CompiledStateGraph:
    interrupts = [
        *(interrupt_before if isinstance(interrupt_before, list | tuple) else []),
        *(interrupt_after if isinstance(interrupt_after, list | tuple) else []),
    ]
    builder.validate(interrupts)

    ensure_valid_checkpointer(checkpointer)
    state_keys = tuple(builder.channels)
    keyset = frozenset(state_keys)
    managed = frozenset(builder.managed)
    is_root = state_keys == (ROOT,)
    channels: dict[str, Any] = dict(builder.channels)
    input_info = builder.schemas[builder.input_schema]
    output_info = builder.schemas[builder.output_schema]
    channels[START] = EphemeralValue(builder.input_schema)
    for node, spec in builder.nodes.items():
        channels[BRANCH_PREFIX + node] = (
            LastValueAfterFinish(Any) if spec.defer else EphemeralValue(Any, guard=False)
        )
    joins: dict[str, list[tuple[str, str]]] = {}
    triggers: dict[str, list[str]] = {n: [BRANCH_PREFIX + n] for n in builder.nodes}
    for starts, end in sorted(builder.waiting_edges):
        chan = f"{JOIN_PREFIX}{'+'.join(starts)}:{end}"
        deferred = end != END and builder.nodes[end].defer
        channels[chan] = (NamedBarrierValueAfterFinish if deferred else NamedBarrierValue)(
            str, set(starts)
        )
        if end != END:
            triggers[end].append(chan)
        for start in starts:
            joins.setdefault(start, []).append((chan, start))

    by_source: dict[str, list[str]] = {}
    for s, e in builder.edges:
        if e != END:
            by_source.setdefault(s, []).append(e)
    for ends in by_source.values():
        if len(ends) > 1:
            ends.sort()  # (each source's targets in name order: sorting the edges does that too)

    def edge_writes(source: str) -> list[tuple[str, Any]]:
        ends = by_source.get(source)
        writes: list[tuple[str, Any]] = [(BRANCH_PREFIX + e, None) for e in ends] if ends else []
        joined = joins.get(source)
        if joined:
            writes.extend(joined)
        return writes

    def branch_writers(source: str, state_mapper: Any) -> list[Writer]:
        out: list[Writer] = []
        for spec in builder.branches.get(source, {}).values():
            if spec.input_schema is not None:
                info = builder.schemas[spec.input_schema]
                keys, mapper, merge = info.keys, make_mapper(info), False
            else:
                keys = (ROOT,) if is_root else (*state_keys, *builder.managed)
                mapper, merge = state_mapper, True
            out.append(BranchWriter(source, spec, keys, mapper, merge))
        return out

    state_mapper = make_mapper(builder.schemas[builder.state_schema])
    nodes: dict[str, PregelNode] = {
        START: PregelNode(
            triggers=[START],
            channels=START,
            bound=(),
            writers=[
                StartWriter(frozenset(input_info.channels), is_root),
                EdgeWriter(edge_writes(START)),
                *branch_writers(START, state_mapper),
            ],
            tags=[TAG_HIDDEN],
            name=START,
        )
    }
    defaults = builder._node_defaults
    default_timeout: Any = MISSING  # (coerced once, when a node without its own needs it)
    found: dict[int, list[Any]] = {}  # id of a node function -> the subgraphs it reaches
    # What nodes with one input schema share (immutable): read keys, mapper, managed keys.
    by_schema: dict[int, tuple[Any, Any, tuple[str, ...]]] = {}
    writers = (
        StateUpdateWriter(keyset, managed, is_root),  # (no state: one serves every node)
        StateUpdateWriter(keyset, managed, is_root, lenient=True),
    )
    branches = builder.branches
    for node, spec in builder.nodes.items():
        info = builder.schemas[spec.input_schema]
        shared = by_schema.get(id(info))
        if shared is None:
            reads: Any = ROOT if info.is_root else tuple(info.channels)
            shared = by_schema[id(info)] = (reads, make_mapper(info), tuple(info.managed))
        is_graph = isinstance(spec.raw, Pregel)
        if default_timeout is MISSING and not spec.timeout:
            default_timeout = _coerce_timeout(defaults.get("timeout"))
        pn = PregelNode(
            triggers=triggers[node],
            channels=shared[0],
            bound=spec.runnable,
            writers=[
                writers[1 if is_graph else 0],
                EdgeWriter(edge_writes(node)),
                *(branch_writers(node, state_mapper) if node in branches else ()),
            ],
            mapper=shared[1],
            retry_policy=spec.retry_policy or defaults.get("retry_policy"),
            cache_policy=spec.cache_policy or defaults.get("cache_policy"),
            timeout=spec.timeout or default_timeout,
            metadata=spec.metadata,
            name=node,
            subgraphs=[spec.raw] if is_graph else _subgraphs(spec, found),
            trace_policy=spec.trace_policy,
        )
        pn.managed_keys = shared[2]
        handler = spec.error_handler or defaults.get("error_handler")
        if handler is not None:
            pn.error_handler = (
                NodeFunction(handler, f"__error_handler__{node}"),
                StateUpdateWriter(keyset, managed, is_root),
            )
        nodes[node] = pn
    output: Any = ROOT if output_info.is_root else tuple(output_info.channels)
    stream: Any = ROOT if is_root else state_keys
    graph = CompiledStateGraph(
        nodes=nodes,
        channels=channels,
        input_channels=START,
        output_channels=output,
        stream_channels=stream,
        stream_mode="updates",
        checkpointer=checkpointer,
        store=store,
        cache=cache,
        interrupt_before_nodes=interrupt_before or (),
        interrupt_after_nodes=interrupt_after or (),
        debug=debug,
        name=name or "LangGraph",
        context_schema=builder.context_schema,
    )
    graph.builder = builder
    _prepare_reducers(builder.channels.values())
    load_run_modules()
    graph.state_keys = keyset
    graph.managed = {k: v for k, v in builder.managed.items()}
    graph.build_tables()
    builder.compiled = True
    return graph


def _prepare_reducers(channels: Any) -> None:
    """A reducer may name what it loads on first use (``__stepgraph_prepare__``:
    ``add_messages`` and langchain-core): compiling loads it, so no step pays for it."""
    for channel in channels:
        prepare = getattr(getattr(channel, "operator", None), "__stepgraph_prepare__", None)
        if prepare is not None:
            prepare()


def _coerce_timeout(value: Any) -> Any:
    return TimeoutPolicy.coerce(value)


def _subgraphs(spec: Any, found: dict[int, list[Any]]) -> list[Any]:
    """The graphs a function node reaches; ``found`` remembers them per function for the
    compile (a function added as many nodes is scanned once; ``PregelNode`` copies the list,
    so each node gets its own)."""
    if not isinstance(spec.runnable, NodeFunction):
        return []
    raw = spec.raw
    graphs = found.get(id(raw))
    if graphs is None:
        graphs = found[id(raw)] = find_subgraphs(raw)
    return graphs
