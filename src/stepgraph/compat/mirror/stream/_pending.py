"""Placeholders for the v3 event-streaming extension API (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, Literal, TypeVar

from typing_extensions import TypedDict

from stepgraph.errors import StepgraphError

T = TypeVar("T")


class V3StreamingUnavailableError(StepgraphError, NotImplementedError):
    """A v3 streaming extension object was used in a build without v3 event streaming."""

    code = "SG614"


def _unavailable(what: str) -> V3StreamingUnavailableError:
    return V3StreamingUnavailableError(
        f"{what} needs v3 event streaming (stream_events(version='v3')), which this stepgraph "
        "build does not provide.",
        code="SG614",
        hint="use stream()/astream() with stream_mode=... (the agent itself runs unchanged)",
    )


class ProtocolEvent(TypedDict, total=False):
    """One event of a run's protocol stream (``method`` and ``params``)."""

    type: str
    method: str
    params: dict[str, Any]


SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]


class StreamTransformer:
    """Base class of v3 stream transformers (subclassable; running one raises SG614)."""

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope = tuple(scope)

    def init(self) -> Any:
        raise _unavailable(type(self).__name__)

    def process(self, event: ProtocolEvent) -> bool:
        raise _unavailable(type(self).__name__)

    def finalize(self) -> None:
        return None

    def fail(self, err: BaseException) -> None:
        return None


class _TasksLifecycleBase(StreamTransformer):
    """Base of the lifecycle/subgraph transformers (placeholder)."""


class ToolCallTransformer(StreamTransformer):
    """The prebuilt tool-call projection (placeholder)."""

    required_stream_modes: ClassVar[tuple[str, ...]] = ("tools",)


class StreamChannel(Generic[T]):
    """A named projection channel of a v3 run stream (placeholder: creating one is fine,
    pushing into it needs v3 streaming)."""

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        self.name = name
        self.maxlen = maxlen

    def push(self, item: T) -> None:
        raise _unavailable("StreamChannel.push")


class StreamMux:
    """Fans protocol events out to transformers (placeholder)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _unavailable("StreamMux")


TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]


class GraphRunStream:
    """The sync run stream of ``stream_events(version='v3')`` (placeholder)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _unavailable(type(self).__name__)


class AsyncGraphRunStream(GraphRunStream):
    """The async run stream (placeholder)."""


class SubgraphRunStream(GraphRunStream):
    """A child run stream (placeholder)."""


class AsyncSubgraphRunStream(AsyncGraphRunStream):
    """An async child run stream (placeholder)."""
