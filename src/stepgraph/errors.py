"""Errors raised by stepgraph.

Every error a user can act on carries a stable ``code`` (``SGnnn``), says what was wrong and
ends with a hint. LangGraph's classes and ``ErrorCode`` exist under the same names so that
``except InvalidUpdateError`` keeps working in ported code.

Exception tree::
    Exception
    ├── StepgraphError                    (mixin: .code, .hint)
    ├── GraphDefinitionError(ValueError)  SG1xx  building / compiling a graph
    ├── InvalidUpdateError                SG2xx  a write a channel cannot take
    ├── EmptyInputError                   SG301  no input for a new run
    ├── UnsupportedArgumentError(TypeError) SG311/SG312 an argument or value not supported
    ├── TaskNotFound
    ├── EmptyChannelError                 reading an empty channel (internal, rarely user-facing)
    ├── NodeTimeoutError                  SG305  a node ran past its timeout
    ├── NodeCancelledError                SG306
    ├── RecursionError
    │   └── GraphRecursionError           SG302
    └── GraphBubbleUp                     control flow, never an error for the user
        ├── GraphDrained                  a RunControl asked the run to stop
        ├── GraphInterrupt
        └── ParentCommand

Codes: SG1xx define/compile, SG2xx state updates, SG3xx execution/API misuse,
SG4xx savers/serde, SG5xx server/remote, SG6xx optional dependencies and the LangGraph
drop-in alias (``stepgraph.compat``, SG610-SG614).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

if TYPE_CHECKING:
    from stepgraph.types import Command, Interrupt

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "ErrorCode",
    "ForeignGraphError",
    "GraphBubbleUp",
    "GraphDefinitionError",
    "GraphDrained",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "StepgraphError",
    "TaskNotFound",
    "UnsupportedArgumentError",
    "create_error_message",
]

DOCS_BASE = "https://stepgraph.dev/errors"


class ErrorCode(Enum):
    """LangGraph's troubleshooting codes (kept for compatibility)."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """Append a troubleshooting line for ``error_code`` to ``message``."""
    return f"{message}\nFor troubleshooting, visit: {DOCS_BASE}/{error_code.value}"


def format_error(code: str, what: str, hint: str | None = None) -> str:
    """Render ``[CODE] what Hint: hint``: the form of every coded stepgraph message."""
    text = f"[{code}] {what}"
    if hint:
        text += f"\nHint: {hint}"
    return text


class StepgraphError(Exception):
    """Base mixin of coded errors: ``code`` is stable, tests assert it, not the text."""

    code: str = "SG000"
    hint: str | None = None

    def __init__(self, *args: Any, code: str | None = None, hint: str | None = None) -> None:
        if code is not None:
            self.code = code
        if hint is not None:
            self.hint = hint
        if args and isinstance(args[0], str) and code is not None:
            args = (format_error(self.code, args[0], hint), *args[1:])
        super().__init__(*args)


class UnsupportedArgumentError(StepgraphError, TypeError):
    """An argument stepgraph does not take, or a value it does not support (SG311 unknown
    keyword argument, SG312 unsupported value): refused, never silently ignored. A
    ``TypeError``, as Python's own for an unexpected keyword argument."""

    code = "SG311"


def refuse_kwargs(where: str, kwargs: Mapping[str, Any], hint: str | None = None) -> None:
    """Raise ``UnsupportedArgumentError`` (SG311) naming every key of ``kwargs``, if any."""
    if kwargs:
        raise UnsupportedArgumentError(
            f"{where} got unexpected keyword argument(s): {', '.join(sorted(kwargs))}",
            code="SG311", hint=hint or "remove them (see the method's signature)",
        )


class ForeignGraphError(StepgraphError, TypeError):
    """An object of the real LangGraph (a graph, a checkpointer) where stepgraph needs its own
    (SG613): the two runtimes do not mix; ``stepgraph.compat``'s alias avoids it."""

    code = "SG613"


class GraphDefinitionError(StepgraphError, ValueError):
    """A graph is built or compiled wrongly (bad node name, unknown edge target, ...)."""

    code = "SG100"


class InvalidUpdateError(StepgraphError):
    """A write that a channel or the state cannot take."""

    code = "SG200"


class EmptyInputError(StepgraphError):
    """A run got no input and has nothing to resume."""

    code = "SG301"


class TaskNotFound(StepgraphError):
    """A task named in a write or resume does not exist."""

    code = "SG303"


class EmptyChannelError(Exception):
    """Raised by ``channel.get()`` when the channel holds no value yet."""


class GraphRecursionError(StepgraphError, RecursionError):
    """The run hit ``recursion_limit`` supersteps without finishing."""

    code = "SG302"


class NodeTimeoutError(StepgraphError):
    """A node attempt ran past its ``run_timeout`` or ``idle_timeout``.

    Not a subclass of ``TimeoutError``, so the default retry predicate retries it.
    """

    code = "SG305"

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: str = "run",
        run_timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.run_timeout = run_timeout
        self.idle_timeout = idle_timeout
        limit = run_timeout if kind == "run" else idle_timeout
        super().__init__(
            f"Node '{node}' exceeded its {kind} timeout of {limit:.3f}s (elapsed: {elapsed:.3f}s).",
            code=self.code,
            hint="raise the node's timeout= or make it faster",
        )


class NodeCancelledError(StepgraphError):
    """A node's own body raised ``CancelledError``."""

    code = "SG306"

    def __init__(self, node: str) -> None:
        self.node = node
        super().__init__(f"Node '{node}' was cancelled.", code=self.code)


class NodeError:
    """What an error handler receives: the failed node's name and its exception."""

    __slots__ = ("node", "error")

    def __init__(self, node: str, error: BaseException) -> None:
        self.node = node
        self.error = error

    def __repr__(self) -> str:
        return f"NodeError(node={self.node!r}, error={self.error!r})"


class GraphBubbleUp(Exception):
    """Control-flow signals that travel up the call stack; not errors."""


class GraphDrained(GraphBubbleUp):
    """The run stopped early because its ``RunControl`` asked it to drain.

    It stopped at a step boundary with that step checkpointed: ``invoke(None, config)``
    continues it. ``reason`` is what ``request_drain(reason)`` was given.
    """

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class GraphInterrupt(GraphBubbleUp):
    """A node called ``interrupt()`` and no resume value was available."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)

    @property
    def interrupts(self) -> Sequence[Interrupt]:
        return self.args[0]


class NodeInterrupt(GraphInterrupt):
    """Deprecated: raise to interrupt from inside a node (use ``interrupt()``)."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        # lazy: cycle (types imports errors)
        from stepgraph.types import Interrupt

        deprecated_since(
            LangGraphDeprecatedSinceV10,
            "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead.",
        )
        super().__init__([Interrupt(value=value, id=id or "")])


class ParentCommand(GraphBubbleUp):
    """A subgraph node returned ``Command(graph=Command.PARENT)``."""

    args: tuple[Command]

    def __init__(self, command: Command) -> None:
        super().__init__(command)


class ParentCommandAtRootError(InvalidUpdateError, ParentCommand):
    """``Command(graph=Command.PARENT)`` from a graph that has no parent (SG241).

    Also a ``ParentCommand`` carrying the command (``args[0]``), as LangGraph lets it leave
    the root graph: code that catches it keeps working, and the message says what is wrong.
    """

    code = "SG241"

    def __init__(self, command: Command, node: str, step: int) -> None:
        Exception.__init__(self, command)
        self.hint = "only nodes of a graph used as a subgraph can route their parent"
        self.message = format_error(
            self.code,
            f"Node '{node}' returned Command(graph=Command.PARENT) but there is no parent "
            f"graph (step {step}).",
            self.hint,
        )

    def __str__(self) -> str:
        return self.message
