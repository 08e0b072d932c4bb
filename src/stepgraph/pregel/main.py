"""``Pregel``: a compiled graph of nodes over channels, run in supersteps.

Plan: pick the nodes whose trigger channels changed (and the queued ``Send`` packets).
Execute: run them in parallel, each seeing the state as of the step's start.
Update: apply all writes through each channel's rule, in a deterministic order.
Repeat until no node is triggered, an interrupt fires, or ``recursion_limit`` is hit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self

from stepgraph.channels import Topic
from stepgraph.channels.base import BaseChannel
from stepgraph.channels.delta import DeltaChannel
from stepgraph.config import RunnableConfig, ensure_config
from stepgraph.constants import TASKS
from stepgraph.engine.node import NodeBuilder, PregelNode
from stepgraph.errors import GraphDefinitionError, refuse_kwargs
from stepgraph.pregel.api import PregelAPI
from stepgraph.pregel.events_api import EventsAPI
from stepgraph.pregel.schemas import SchemaAPI
from stepgraph.pregel.state import StateAPI
from stepgraph.pregel.validate import validate_pregel
from stepgraph.types import Send
from stepgraph.typing import ContextT, InputT, OutputT, StateT
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

__all__ = ["Pregel"]

class Pregel(PregelAPI[StateT, ContextT, InputT, OutputT], StateAPI, EventsAPI, SchemaAPI):
    """A graph runtime built from channels and nodes (what ``StateGraph.compile`` returns).

    Use ``invoke``/``stream`` (and ``ainvoke``/``astream``) to run it. Generic, as
    LangGraph's ``Pregel[StateT, ContextT, InputT, OutputT]``: ``input`` is typed
    ``InputT | Command | None``, ``context`` ``ContextT | None``.
    """

    def __init__(
        self,
        *,
        nodes: Mapping[str, PregelNode | NodeBuilder],
        channels: Mapping[str, BaseChannel] | None,
        input_channels: str | Sequence[str],
        output_channels: str | Sequence[str],
        stream_channels: str | Sequence[str] | None = None,
        stream_mode: str = "values",
        interrupt_before_nodes: Sequence[str] | str = (),
        interrupt_after_nodes: Sequence[str] | str = (),
        debug: bool = False,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        retry_policy: Any = (),
        cache_policy: Any = None,
        context_schema: Any = None,
        config: Any = None,
        trigger_to_nodes: Mapping[str, Sequence[str]] | None = None,
        name: str = "LangGraph",
        step_timeout: float | None = None,
        auto_validate: bool = True,
        stream_eager: bool = False,
        stream_transformers: Sequence[Any] | None = None,
        **deprecated: Any,
    ) -> None:
        if "config_type" in deprecated:
            deprecated_since(LangGraphDeprecatedSinceV10, "`config_type` is deprecated and will be "
                             "removed. Please use `context_schema` instead.")
            context_schema = context_schema or deprecated.pop("config_type")
        if deprecated:
            raise TypeError(
                f"Pregel() got unexpected keyword argument(s): {', '.join(sorted(deprecated))}"
            )
        built: dict[str, PregelNode] = {}
        for key, node in nodes.items():
            pn = node.build() if isinstance(node, NodeBuilder) else node
            pn.name = key
            built[key] = pn
        self.nodes = built
        chans = dict(channels or {})
        if TASKS in chans and not isinstance(chans[TASKS], Topic):
            raise ValueError(f"Channel '{TASKS}' is reserved and cannot be used in the graph.")
        chans[TASKS] = Topic(Send, accumulate=False)
        for key, ch in chans.items():
            ch.key = key
        self.channels = chans
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.stream_channels = stream_channels
        self.stream_mode = stream_mode
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        self.debug = debug
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        if retry_policy is None:
            retry_policy = ()
        elif not isinstance(retry_policy, (list, tuple)) or hasattr(retry_policy, "_fields"):
            retry_policy = (retry_policy,)
        self.retry_policy = tuple(retry_policy)
        self.cache_policy = cache_policy
        self.context_schema = context_schema
        self.config = config
        self.name = name
        self.step_timeout = step_timeout
        self.stream_eager = stream_eager
        """Stream parts as tasks produce them, not after each step (entrypoints do)."""
        self.stream_transformers: tuple[Any, ...] = tuple(stream_transformers or ())
        """Transformer factories of every ``stream_events(version="v3")`` run."""
        self.managed: dict[str, Any] = {}
        self._trigger_to_nodes = dict(trigger_to_nodes) if trigger_to_nodes else None
        self._kinds: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._volatile: tuple[Any, frozenset[str]] | None = None
        self._delta_keys: tuple[str, ...] | None = None
        if auto_validate:
            self.validate()

    # -- derived structure ------------------------------------------------------------------
    def validate(self) -> Pregel:
        """Check names and subscriptions; raises ``GraphDefinitionError`` naming the problem."""
        validate_pregel(self)
        self._trigger_to_nodes = None
        self._kinds = None
        self._delta_keys = None
        return self

    @property
    def trigger_to_nodes(self) -> dict[str, list[str]]:
        """Channel -> nodes it triggers (PULL), used to plan only what changed."""
        if self._trigger_to_nodes is None:
            t2n: dict[str, list[str]] = {}
            for name, node in self.nodes.items():
                for trig in node.triggers:
                    t2n.setdefault(trig, []).append(name)
            self._trigger_to_nodes = t2n
        return self._trigger_to_nodes

    @property
    def stream_keys(self) -> str | Sequence[str]:
        if self.stream_channels is not None:
            return self.stream_channels
        return tuple(k for k in self.channels if k != TASKS)

    @property
    def stream_keyset(self) -> frozenset[str]:
        keys = self.stream_keys
        return frozenset([keys] if isinstance(keys, str) else keys)

    @property
    def delta_keys(self) -> tuple[str, ...]:
        """The channels that are ``DeltaChannel``s (stored as writes, rebuilt on restore)."""
        if self._delta_keys is None:
            is_delta = _per_class(DeltaChannel)
            self._delta_keys = tuple(k for k, ch in self.channels.items() if is_delta(ch))
        return self._delta_keys

    def channel_kinds(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(volatile, finishable) channel names: the only ones visited on steps nobody wrote."""
        if self._kinds is None:
            volatile, finishable = [], []
            is_channel = _per_class(BaseChannel)
            for key, ch in self.channels.items():
                kind = ch.idle_kind() if is_channel(ch) else "unknown"
                if kind in ("volatile", "unknown"):
                    volatile.append(key)
                if kind in ("finish", "unknown"):
                    finishable.append(key)
            self._kinds = (tuple(volatile), tuple(finishable))
        return self._kinds

    def build_tables(self) -> None:
        """Make the tables a run reads (triggers, channel kinds, delta keys) now: compiling
        a graph calls it, so its first run does not pay for them."""
        _ = self.trigger_to_nodes, self.delta_keys
        self.volatile_set()

    def volatile_set(self) -> frozenset[str]:
        """The volatile names of ``channel_kinds()`` as a set, made once per kinds."""
        kinds = self.channel_kinds()
        made = getattr(self, "_volatile", None)
        if made is None or made[0] is not kinds:
            made = self._volatile = (kinds, frozenset(kinds[0]))
        return made[1]

    def map_update(self, update: Any, *, source: str) -> list[tuple[str, Any]]:
        """Writes for a state update given from outside a node (``Command(update=...)``)."""
        if isinstance(update, dict):
            unknown = [k for k in update if k not in self.channels]
            if unknown:
                raise GraphDefinitionError(
                    f"{source} updates unknown channel(s) {unknown}.", code="SG211",
                    hint=f"known channels: {sorted(self.channels)}",
                )
            return list(update.items())
        if isinstance(update, (list, tuple)):
            return [tuple(x) for x in update]  # type: ignore[misc]
        raise GraphDefinitionError(f"{source}: expected a dict update, got {type(update).__name__}.",
                                   code="SG212")

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached results of ``nodes`` (all nodes when ``None``)."""
        # lazy: keeps `import stepgraph.graph` lean
        from stepgraph.engine.caching import node_namespace

        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        names = list(self.nodes) if nodes is None else list(nodes)
        self.cache.clear([node_namespace(self.nodes[n], n) for n in names if n in self.nodes])

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        self.clear_cache(nodes)

    def copy(self, update: Mapping[str, Any] | None = None, **changes: Any) -> Self:
        """A shallow copy with some attributes replaced (``update``, LangGraph's form, or
        keyword arguments); a name the graph has no attribute of is refused (SG311)."""
        changes = {**(update or {}), **changes}
        refuse_kwargs("copy()", {k: v for k, v in changes.items() if k not in self.__dict__},
                      "copy() replaces existing attributes (checkpointer, store, config, ...)")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> Self:
        """A copy whose config is ``config`` (and the config keys given as keyword
        arguments) merged onto the graph's."""
        return self.copy(config=ensure_config(self.config, config, kwargs))

    def map(self) -> _EachInput:
        """A runnable that runs this graph once per element of a list input (``batch``)."""
        return _EachInput(self)

    def get_graph(self, config: Any = None, *, xray: bool | int = False) -> Any:
        """A drawable ``stepgraph.draw.Graph`` (``draw_mermaid()``, ``draw_ascii()``, ``to_json()``).

        ``xray=True`` expands subgraph nodes; ``xray=N`` expands N levels.
        """
        # lazy: drawing only (uuid, platform)
        from stepgraph.draw import build_graph

        return build_graph(self, xray=xray, config=config)

    async def aget_graph(self, config: Any = None, *, xray: bool | int = False) -> Any:
        """Async twin of ``get_graph`` (drawing does no I/O)."""
        return self.get_graph(config, xray=xray)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, nodes={list(self.nodes)})"


class _EachInput:
    """``Pregel.map()``: ``invoke(list)`` returns one output per element, in order."""

    __slots__ = ("graph", "name")

    def __init__(self, graph: Pregel) -> None:
        self.graph = graph
        self.name = f"{graph.name}Each"

    def invoke(self, inputs: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        return self.graph.batch(list(inputs), config, **kwargs)

    async def ainvoke(self, inputs: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        return await self.graph.abatch(list(inputs), config, **kwargs)


def _per_class(cls: type) -> Callable[[Any], bool]:
    """``isinstance(obj, cls)`` answered once per class of ``obj`` (an ABC check per channel
    class, not per channel: two per node on a compile)."""
    known: dict[type, bool] = {}

    def check(obj: Any) -> bool:
        found = known.get(type(obj))
        if found is None:
            found = known[type(obj)] = isinstance(obj, cls)
        return found

    return check
