"""``PregelNode``: what a node subscribes to, reads, runs and writes; ``NodeBuilder`` builds one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepgraph.constants import TAG_HIDDEN
from stepgraph.engine.callable import NodeFunction, RunnableNode, coerce_callable
from stepgraph.types import TimeoutPolicy

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task
    from stepgraph.types import CachePolicy, RetryPolicy, TimeoutPolicy

__all__ = ["ChannelWrite", "ChannelWriteEntry", "NodeBuilder", "PregelNode", "Writer"]

PASSTHROUGH = object()
"""Marker: write the node's output itself."""


class Writer:
    """Turns a node's output into ``(channel, value)`` writes on the task."""

    __slots__ = ()
    is_async = False

    def run(self, task: Task, value: Any) -> None:
        raise NotImplementedError

    async def arun(self, task: Task, value: Any) -> None:
        self.run(task, value)

    def targets(self) -> Sequence[str]:
        """Channels this writer may write (for validation and drawing)."""
        return ()


@dataclass(frozen=True, slots=True)
class ChannelWriteEntry:
    """Write ``value`` (or the node output, passed through ``mapper``) to ``channel``."""

    channel: str
    value: Any = PASSTHROUGH
    skip_none: bool = False
    mapper: Callable[[Any], Any] | None = None


class ChannelWrite(Writer):
    """The writer of low-level ``Pregel`` nodes (``NodeBuilder.write_to``)."""

    __slots__ = ("entries",)

    def __init__(self, entries: Sequence[ChannelWriteEntry]) -> None:
        self.entries = tuple(entries)

    def run(self, task: Task, value: Any) -> None:
        for entry in self.entries:
            out = value if entry.value is PASSTHROUGH else entry.value
            if entry.mapper is not None:
                out = entry.mapper(out)
            if out is None and entry.skip_none:
                continue
            task.writes.append((entry.channel, out))

    def targets(self) -> Sequence[str]:
        return tuple(e.channel for e in self.entries)


class BoundSteps(tuple):
    """A node's bodies, in order. With one body, attributes the tuple does not have are read
    from the user's object (LangGraph's ``node.bound`` *is* that object: code written for it
    reads ``graph.nodes["tools"].bound._tools_by_name``)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if len(self) == 1 and not name.startswith("__"):
            step = self[0]
            target = step.runnable if isinstance(step, RunnableNode) else getattr(step, "func", step)
            return getattr(target, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class PregelNode:
    """A compiled node.

    Attributes:
        triggers: channels whose update schedules this node.
        channels: channel(s) read as input: one name gives its value, a list gives a dict.
        mapper: turns the input dict into the node's input type (pydantic model...).
        bound: the body(ies) to run, in sequence; ``()`` passes the input through.
        writers: turn the output into writes.
    """

    __slots__ = (
        "name",
        "triggers",
        "channels",
        "mapper",
        "bound",
        "writers",
        "retry_policy",
        "cache_policy",
        "timeout",
        "metadata",
        "tags",
        "hidden",
        "subgraphs",
        "is_async",
        "error_handler",
        "managed_keys",
        "trace_policy",
    )

    def __init__(
        self,
        *,
        triggers: Sequence[str],
        channels: str | Sequence[str],
        bound: Sequence[NodeFunction | RunnableNode] | NodeFunction | RunnableNode | None = None,
        writers: Sequence[Writer] = (),
        mapper: Callable[[Any], Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        timeout: TimeoutPolicy | None = None,
        metadata: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        name: str = "",
        subgraphs: Sequence[Any] = (),
        trace_policy: Any = None,
    ) -> None:
        self.name = name
        self.triggers = tuple(triggers)
        self.channels = channels if isinstance(channels, str) else tuple(channels)
        if bound is None:
            self.bound: tuple[NodeFunction | RunnableNode, ...] = BoundSteps()
        elif isinstance(bound, (NodeFunction, RunnableNode)):
            self.bound = BoundSteps((bound,))
        else:
            self.bound = BoundSteps(bound)
        self.writers = list(writers)
        self.mapper = mapper
        if retry_policy is None:
            self.retry_policy: tuple[RetryPolicy, ...] = ()
        elif isinstance(retry_policy, tuple) and not hasattr(retry_policy, "_fields"):
            self.retry_policy = retry_policy
        elif isinstance(retry_policy, list):
            self.retry_policy = tuple(retry_policy)
        else:
            self.retry_policy = (retry_policy,)  # type: ignore[assignment]
        self.cache_policy = cache_policy
        if timeout is not None:
            timeout = TimeoutPolicy.coerce(timeout)
        self.timeout = timeout
        self.metadata = metadata or {}
        self.tags = list(tags or ())
        self.hidden = TAG_HIDDEN in self.tags
        self.subgraphs = list(subgraphs)
        self.is_async = _any_async(self.bound) or _any_async(self.writers)
        self.error_handler: Any = None
        """``(handler, writer)`` run instead of failing, or ``None``."""
        self.managed_keys: tuple[str, ...] = ()
        self.trace_policy = trace_policy
        """``TracePolicy``: what tracers record for this node's runs (``None``: as is)."""

    def __repr__(self) -> str:
        return f"PregelNode(name={self.name!r}, triggers={self.triggers!r})"

    def copy(self, update: dict[str, Any] | None = None, **changes: Any) -> PregelNode:
        """A shallow copy with the attributes in ``update`` (and ``changes``) replaced."""
        changes = {**(update or {}), **changes}
        unknown = [k for k in changes if k not in PregelNode.__slots__]
        if unknown:
            raise TypeError(f"PregelNode has no attribute(s) {unknown}")
        new = object.__new__(PregelNode)
        for slot in PregelNode.__slots__:
            setattr(new, slot, getattr(self, slot))
        for key, value in changes.items():
            setattr(new, key, value)
        return new


def _any_async(parts: Sequence[Any]) -> bool:
    """Whether a body or writer is async (a loop: no generator made per node)."""
    for part in parts:
        if part.is_async:
            return True
    return False


class NodeBuilder:
    """Fluent builder of a low-level node: subscribe, read, do, write."""

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._bound: list[NodeFunction | RunnableNode] = []
        self._writes: list[ChannelWriteEntry] = []
        self._writers: list[Writer] = []
        self._retry: list[RetryPolicy] = []
        self._cache: CachePolicy | None = None
        self._timeout: TimeoutPolicy | None = None
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}

    def subscribe_only(self, channel: str) -> NodeBuilder:
        """Run when ``channel`` changes; the input is that channel's value alone."""
        if self._channels:
            raise ValueError("subscribe_only cannot be combined with other subscriptions")
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> NodeBuilder:
        """Run when any of ``channels`` changes; read them into the input dict if ``read``."""
        if isinstance(self._channels, str):
            raise ValueError("subscribe_to cannot follow subscribe_only")
        self._triggers.extend(channels)
        if read:
            self._channels.extend(channels)
        return self

    def read_from(self, *channels: str) -> NodeBuilder:
        """Also read ``channels`` into the input dict (without being triggered by them)."""
        if isinstance(self._channels, str):
            raise ValueError("read_from cannot follow subscribe_only")
        self._channels.extend(channels)
        return self

    def do(self, action: Any) -> NodeBuilder:
        """Add a step: a function, an async function or an object with ``invoke``."""
        self._bound.append(coerce_callable(action))
        return self

    def write_to(self, *channels: str | ChannelWriteEntry | Writer, **kwargs: Any) -> NodeBuilder:
        """Write the output to ``channels``; ``name=value`` writes a value or ``fn(output)``."""
        for ch in channels:
            if isinstance(ch, str):
                self._writes.append(ChannelWriteEntry(ch))
            elif isinstance(ch, ChannelWriteEntry):
                self._writes.append(ch)
            elif isinstance(ch, Writer):
                self._writers.append(ch)
            else:
                raise TypeError(f"write_to: unsupported target {ch!r}")
        for key, value in kwargs.items():
            if callable(value):
                self._writes.append(ChannelWriteEntry(key, mapper=value))
            else:
                self._writes.append(ChannelWriteEntry(key, value=value))
        return self

    def meta(self, *tags: str, **metadata: Any) -> NodeBuilder:
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> NodeBuilder:
        self._retry.extend(policies)
        return self

    def add_cache_policy(self, policy: CachePolicy) -> NodeBuilder:
        self._cache = policy
        return self

    def set_timeout(self, timeout: float | TimeoutPolicy | None) -> NodeBuilder:
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self) -> PregelNode:
        writers = list(self._writers)
        if self._writes:
            writers.insert(0, ChannelWrite(self._writes))
        return PregelNode(
            triggers=self._triggers,
            channels=self._channels,
            bound=self._bound,
            writers=writers,
            retry_policy=tuple(self._retry) or None,
            cache_policy=self._cache,
            timeout=self._timeout,
            metadata=self._metadata,
            tags=self._tags,
        )
