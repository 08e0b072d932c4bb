"""A ``RemoteGraph`` running inside a local graph's node: what it takes from the parent task.

The running ``Task`` (``stepgraph._running.current_task()``) gives:

* the caller's namespace (``task.ns``), under which the remote's events are streamed into
  the parent's sink when the parent streams subgraphs;
* the interrupts this task got from the remote on an earlier run (its saved
  ``__interrupt__`` write), and the parent's resume values (``Command(resume=...)``): a
  resume aimed at those interrupts is forwarded to the remote thread as
  ``command: {"resume": ...}`` instead of restarting the remote run;
* the parent's state keys, so the remote's whole final state updates only the keys the
  parent has (as a local compiled subgraph does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.constants import INTERRUPT, MISSING, NS_SEP
from stepgraph.errors import GraphInterrupt, StepgraphError
from stepgraph.remote.wire import to_interrupts
from stepgraph.types import Interrupt

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task


class NodeLink:
    """The parent task of a remote call, and what the call owes it."""

    __slots__ = ("task", "ns", "sink", "forward", "pending", "_from_null", "is_body")

    def __init__(self, task: Task, remote: Any) -> None:
        self.task = task
        self.ns: tuple[str, ...] = tuple(task.ns.split(NS_SEP))
        self.sink = task.run.sink
        self.forward: bool = bool(task.run.sink.subgraphs)
        self.pending: tuple[Interrupt, ...] = _pending_interrupts(task)
        self._from_null = False
        self.is_body = any(getattr(step, "runnable", None) is remote for step in task.node.bound)

    # -- stream modes -------------------------------------------------------------------
    def parent_modes(self) -> list[str]:
        """The parent's stream modes, when the parent streams subgraphs (else none)."""
        return sorted(self.sink.modes) if self.forward else []

    def emit(self, ns: tuple[str, ...], mode: str, payload: Any) -> None:
        """Stream one remote part to the parent's caller, under the caller's namespace."""
        if self.forward:
            self.sink.emit(self.ns + ns, mode, payload)

    # -- resuming -----------------------------------------------------------------------
    def resume_value(self) -> Any:
        """The parent's resume value for this task's pending remote interrupts, or MISSING.

        A resume map (``{interrupt_id: value}``) answers the ids it names; a single value
        (``Command(resume=v)``) answers them all. The single value is consumed from the
        parent run only once the remote accepted the run (``accepted``), so a failed
        request that the node retries still finds it.
        """
        run = self.task.run
        ids = [i.id for i in self.pending if i.id]
        if run.resume_map:
            hit = {i: run.resume_map[i] for i in ids if i in run.resume_map}
            if hit:
                return hit[ids[0]] if len(ids) == 1 else hit
        if run.null_resume:
            self._from_null = True
            return run.null_resume[-1]
        return MISSING

    def accepted(self) -> None:
        """The remote started the run: a single resume value is now used up."""
        if self._from_null:
            self._from_null = False
            null = self.task.run.null_resume
            if null:
                null.pop()

    def still_waiting(self) -> GraphInterrupt:
        """The remote is still paused and nothing resumes it: interrupt the parent again."""
        return GraphInterrupt(self.pending)

    # -- results ------------------------------------------------------------------------
    def interrupt(self, interrupts: tuple[Interrupt, ...]) -> BaseException:
        """The parent-side exception for a remote run that stopped at ``interrupts``."""
        if not interrupts:
            return StepgraphError(
                f"The remote graph behind node '{self.task.name}' stopped at a static "
                "breakpoint (interrupt_before/interrupt_after), which a parent graph cannot "
                "resume.",
                code="SG506",
                hint="remove the breakpoint from the remote assistant, or call interrupt() "
                "in the remote node instead",
            )
        if self.task.run.checkpointer is None:
            return StepgraphError(
                f"The remote graph behind node '{self.task.name}' was interrupted but the "
                "parent graph has no checkpointer, so the run could never be resumed.",
                code="SG320",
                hint="compile the parent with checkpointer=InMemorySaver() (or SqliteSaver) "
                "and pass a thread_id",
            )
        return GraphInterrupt(interrupts)

    def node_output(self, values: Any) -> Any:
        """The remote's final state as this node's update: only the keys the parent has."""
        if not self.is_body or not isinstance(values, dict):
            return values
        keys = _state_keys(self.task)
        if keys is None:
            return values
        return {k: v for k, v in values.items() if k in keys}


def _pending_interrupts(task: Task) -> tuple[Interrupt, ...]:
    """Interrupts saved for this task by a previous run of the parent (resuming only)."""
    out: list[Interrupt] = []
    for tid, chan, value in task.run.pending_writes or ():
        if tid == task.id and chan == INTERRUPT:
            out.extend(to_interrupts(value if isinstance(value, (list, tuple)) else [value]))
    return tuple(out)


def _state_keys(task: Task) -> frozenset[str] | None:
    """The parent's state keys (from the node's state writer); ``None`` for a root state."""
    for writer in task.node.writers:
        keys = getattr(writer, "keys", None)
        if isinstance(keys, frozenset) and hasattr(writer, "is_root"):
            return None if writer.is_root else keys
    return None
