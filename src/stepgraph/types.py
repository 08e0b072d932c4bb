"""Public value objects: ``Send``, ``Command``, ``Interrupt``, ``Overwrite``, policies, snapshots."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    NamedTuple,
    TypeVar,
)

from stepgraph._cache_key import default_cache_key
from stepgraph._running import current_task
from stepgraph._updates import update_as_tuples
from stepgraph.constants import OVERWRITE_KEY as _OVERWRITE_KEY
from stepgraph.errors import ForeignGraphError, GraphInterrupt, StepgraphError
from stepgraph.warnings import (
    LangGraphDeprecatedSinceV10,
    LangGraphDeprecatedSinceV11,
    deprecated_since,
)

if TYPE_CHECKING:
    from datetime import timedelta

    from stepgraph.config import RunnableConfig

__all__ = [
    "All",
    "CachePolicy",
    "Checkpointer",
    "Command",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "Overwrite",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
    "TimeoutPolicy",
    "TracePolicy",
    "interrupt",
    "omit_payload",
]

N = TypeVar("N", bound=Hashable)

All = Literal["*"]
"""Interrupt before/after every node."""

StreamMode = Literal[
    "values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools"
]
"""What a stream yields (see ``stream``)."""

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are written: before the next step, alongside it, or only at exit."""

StreamWriter = Callable[[Any], None]
"""Writes one chunk to the ``custom`` stream."""

Checkpointer = None | bool | Any
"""``None`` inherits the parent's saver, ``True`` keeps its own history, ``False`` disables it."""


class Send:
    """Run ``node`` in the next superstep with ``arg`` as its whole input (a PUSH task).

    ``arg`` need not match the state schema; reducers never see it. Each ``Send`` is its own
    task: two equal ``Send`` objects run twice.
    """

    __slots__ = ("node", "arg", "timeout")

    node: str
    arg: Any
    timeout: Any

    def __init__(self, /, node: str, arg: Any, *, timeout: Any = None) -> None:
        self.node = node
        self.arg = arg
        self.timeout = TimeoutPolicy.coerce(timeout)

    def __hash__(self) -> int:
        return hash((self.node, self.arg, self.timeout))

    def __repr__(self) -> str:
        if self.timeout is None:
            return f"Send(node={self.node!r}, arg={self.arg!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"

    def __eq__(self, value: object) -> bool:
        return (
            isinstance(value, Send)
            and self.node == value.node
            and self.arg == value.arg
            and self.timeout == value.timeout
        )


_LEGACY_INTERRUPT_KWARGS = frozenset({"ns", "when", "resumable", "interrupt_id"})


@dataclass(frozen=True, slots=True, init=False)
class Interrupt:
    """A pause requested by ``interrupt(value)``; ``id`` identifies it for resuming.

    ``Interrupt(value, ns=[...], when=..., resumable=...)`` is the shape LangGraph versions
    before 0.6 stored in checkpoints; such an object is rebuilt with the id LangGraph gave
    it (the 128-bit xxh3 hash of its namespace), so a client that saw that id can still
    resume it. ``when`` and ``resumable`` are dropped, as LangGraph drops them.
    """

    value: Any
    id: str

    def __init__(self, value: Any, id: str = "", **legacy: Any) -> None:
        unknown = set(legacy) - _LEGACY_INTERRUPT_KWARGS
        if unknown:
            raise TypeError(f"Interrupt() got unexpected keyword argument(s) {sorted(unknown)}")
        ns = legacy.get("ns")
        if not id and legacy.get("interrupt_id"):
            id = legacy["interrupt_id"]
        elif not id and isinstance(ns, Sequence) and not isinstance(ns, str):
            id = langgraph_interrupt_id("|".join(ns))
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "id", id)

    @classmethod
    def from_ns(cls, value: Any, ns: str) -> Interrupt:
        """An interrupt with the id LangGraph gives an interrupt raised in namespace ``ns``
        (how older checkpoints and LangGraph clients name it)."""
        return cls(value=value, id=langgraph_interrupt_id(ns))

    @property
    def interrupt_id(self) -> str:
        """Deprecated alias of ``id``."""
        deprecated_since(
            LangGraphDeprecatedSinceV10, "`interrupt_id` is deprecated. Use `id` instead."
        )
        return self.id


def langgraph_interrupt_id(ns: str) -> str:
    """LangGraph's id of the interrupts raised in namespace ``ns``: the xxh3-128 hex digest.

    Needs the ``xxhash`` package (installed with langchain-core, or ``pip install xxhash``).
    """
    try:
        from xxhash import xxh3_128_hexdigest
    except ImportError as exc:
        raise StepgraphError(
            f"Cannot compute LangGraph's id of an interrupt in namespace {ns!r}: the 'xxhash' "
            "package is not installed.",
            code="SG340",
            hint="pip install xxhash (needed to read interrupts saved by LangGraph < 0.6)",
        ) from exc
    return xxh3_128_hexdigest(ns.encode())


def interrupt_id_for(ns: str) -> str:
    """Stable 32-hex id of the interrupts raised inside the task whose namespace is ``ns``."""
    return hashlib.blake2b(ns.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Write ``value`` to a reducer channel without applying the reducer."""

    value: Any
    type: str = _OVERWRITE_KEY


@dataclass(frozen=True)
class Command(Generic[N]):
    """Update the state and choose what runs next, from a node or as graph input.

    Attributes:
        graph: ``None`` for the current graph, ``Command.PARENT`` for the closest parent.
        update: state update (dict, list of ``(key, value)``, or an annotated object).
        resume: value(s) for pending ``interrupt()`` calls; a dict of interrupt id -> value
            resumes several at once.
        goto: node name(s) or ``Send`` packets to run next.
    """

    graph: str | None = None
    update: Any | None = None
    resume: dict[str, Any] | Any | None = None
    goto: Send | Sequence[Send | N] | N = ()

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        parts = []
        for name in ("graph", "update", "resume", "goto"):
            value = getattr(self, name)
            if value is not None and value != ():
                parts.append(f"{name}={value!r}")
        return f"Command({', '.join(parts)})"

    def _update_as_tuples(self) -> Sequence[tuple[str, Any]]:
        return update_as_tuples(self.update)


_NO_RETRY = (
    ValueError,
    TypeError,
    ArithmeticError,
    ImportError,
    LookupError,
    NameError,
    SyntaxError,
    RuntimeError,
    ReferenceError,
    StopIteration,
    StopAsyncIteration,
    OSError,
)


def default_retry_on(exc: BaseException) -> bool:
    """LangGraph's default: retry connection errors and HTTP 5xx, not programming errors."""
    if isinstance(exc, ConnectionError):
        return True
    status = _http_status(exc)
    if status is not None:
        return 500 <= status < 600
    if isinstance(exc, _NO_RETRY):
        return False
    return True


def _http_status(exc: BaseException) -> int | None:
    module = type(exc).__module__ or ""
    if module.startswith(("httpx", "requests")):
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status
    return None


class RetryPolicy(NamedTuple):
    """How a failing node is retried (defaults as in LangGraph)."""

    initial_interval: float = 0.5
    """Seconds before the first retry."""
    backoff_factor: float = 2.0
    """Multiplier of the interval after each retry."""
    max_interval: float = 128.0
    """Upper bound of the interval (jitter is added on top)."""
    max_attempts: int = 3
    """Attempts in all, the first included."""
    jitter: bool = True
    """Add ``uniform(0, 1)`` seconds to each sleep."""
    retry_on: (
        type[BaseException] | Sequence[type[BaseException]] | Callable[[BaseException], bool]
    ) = default_retry_on
    """Exception class(es) or predicate deciding whether to retry; default ``default_retry_on``."""


@dataclass(frozen=True)
class CachePolicy:
    """Cache a node's writes, keyed by ``key_func(input)``, for ``ttl`` seconds (None: forever)."""

    key_func: Callable[..., str | bytes] = default_cache_key
    ttl: int | None = None


@dataclass(frozen=True)
class TimeoutPolicy:
    """Per-attempt limits of a node: total run time and time without progress."""

    run_timeout: float | timedelta | None = None
    """Seconds (a ``timedelta`` is stored as seconds)."""
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    def __post_init__(self) -> None:
        from datetime import timedelta

        for name in ("run_timeout", "idle_timeout"):
            value = getattr(self, name)
            if isinstance(value, timedelta):  # stored as seconds
                value = value.total_seconds()
                object.__setattr__(self, name, value)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be greater than 0")

    @classmethod
    def coerce(cls, value: Any) -> TimeoutPolicy | None:
        """A policy from seconds (a number or a ``timedelta``: the run timeout) or a policy."""
        if value is None or isinstance(value, TimeoutPolicy):
            return value
        from datetime import timedelta

        if isinstance(value, timedelta):
            return cls(run_timeout=value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"timeout must be a number or TimeoutPolicy, got {value!r}")
        return cls(run_timeout=float(value))


@dataclass(frozen=True, slots=True)
class TracePolicy:
    """What tracers record for a node's runs (``add_node(..., trace_policy=...)``).

    Each processor gets the node's real input (``process_inputs``) or return value
    (``process_outputs``) and returns what to record instead, e.g. a summary of a long
    message history. Only tracers (``BaseTracer`` handlers such as LangSmith's) see the
    processed value; the node, the graph and other callback handlers see the real one,
    and so do the node's child runs. A processor that raises records the real value.
    Not a redaction tool: use the LangSmith client's ``hide_inputs``/``hide_outputs``.
    """

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict[str, Any]:
    """A ``TracePolicy`` processor recording an empty payload (keeps the run and its timing)."""
    return {}


class PregelTask(NamedTuple):
    """A task in a ``StateSnapshot``: what ran or will run, and what came of it."""

    id: str
    name: str
    path: tuple[str | int | tuple, ...]
    error: Exception | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: RunnableConfig | StateSnapshot | None = None
    result: Any | None = None


class StateSnapshot(NamedTuple):
    """The state of a thread at one checkpoint."""

    values: dict[str, Any] | Any
    next: tuple[str, ...]
    config: RunnableConfig
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: RunnableConfig | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...] = ()


class StateUpdate(NamedTuple):
    """One update for ``bulk_update_state``."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


_ValueT = TypeVar("_ValueT")


@dataclass(slots=True)
class GraphOutput(Generic[_ValueT]):
    """What ``invoke(..., version="v2")`` returns: the output and any pending interrupts."""

    value: _ValueT
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:
        """Deprecated: read ``.value`` (``.interrupts`` for ``"__interrupt__"``)."""
        _warn_graph_output("`result[key]`")
        if key == "__interrupt__":
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        """Deprecated: test ``.value`` (``.interrupts`` for ``"__interrupt__"``)."""
        _warn_graph_output("`key in result`")
        if key == "__interrupt__":
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def _warn_graph_output(how: str) -> None:
    deprecated_since(
        LangGraphDeprecatedSinceV11,
        f"Accessing GraphOutput via {how} is deprecated. Use `result.value` to access the "
        "output value directly, or `result.interrupts` for interrupts.",
        stacklevel=3,
    )


def interrupt(value: Any) -> Any:
    """Pause the graph here and surface ``value`` to the caller.

    The first call raises ``GraphInterrupt``; when the run is resumed with
    ``Command(resume=...)`` the node re-runs from its top and this call returns the resume
    value. Several calls in one node are matched to resume values by their order.
    """
    task: Any = current_task()
    if task is None:
        raise RuntimeError("Called interrupt() outside of a running graph node")
    idx = task.interrupt_counter
    task.interrupt_counter += 1
    if idx < len(task.resume):
        return task.resume[idx]
    run = task.run
    if run.checkpointer is None:
        raise StepgraphError(
            f"Node '{task.name}' called interrupt() but the graph has no checkpointer, so the "
            "run could never be resumed.",
            code="SG320",
            hint="compile(checkpointer=InMemorySaver()) (or SqliteSaver) and pass a thread_id",
        )
    iid = interrupt_id_for(task.ns if idx == 0 else f"{task.ns}#{idx}")
    if run.resume_map is not None and iid in run.resume_map:
        resumed = run.resume_map[iid]
        task.resume.append(resumed)
        return resumed
    if run.null_resume:
        resumed = run.null_resume.pop()
        task.resume.append(resumed)
        return resumed
    raise GraphInterrupt((Interrupt(value=value, id=iid),))


def ensure_valid_checkpointer(checkpointer: Any) -> Any:
    """``None``, ``True``, ``False`` or a saver; anything else is a ``TypeError``."""
    if checkpointer is None or isinstance(checkpointer, bool):
        return checkpointer
    module = type(checkpointer).__module__ or ""
    if module.startswith("langgraph."):
        raise ForeignGraphError(
            f"{module}.{type(checkpointer).__name__} is a checkpointer of the real LangGraph; "
            "stepgraph graphs need a stepgraph saver.",
            code="SG613",
            hint="use stepgraph.checkpoint.* (with stepgraph.compat.install_langgraph_alias() "
            "installed first, `from langgraph.checkpoint...` imports stepgraph's savers)",
        )
    if hasattr(checkpointer, "get_tuple") and hasattr(checkpointer, "put"):
        return checkpointer
    raise TypeError(
        f"Invalid checkpointer provided. Expected an instance of BaseCheckpointSaver, `True`, "
        f"`False`, or `None`. Received {type(checkpointer).__name__}."
    )
