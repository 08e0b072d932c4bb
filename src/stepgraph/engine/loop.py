"""``RunLoop``: the superstep state machine shared by the sync and async drivers.

The loop is sans-IO: it never blocks, never talks to a saver, a cache or the stream. Each
method returns the effects it wants performed (``engine/effects.py``: ``Save``, ``Emit``,
``CacheGet``, ``CacheSet``), and a driver performs them in order::

    loop.restore(saved)            # channels from a checkpoint (or empty)
    perform(loop.first())          # map the input to writes, the input checkpoint
    while loop.status == "pending":
        perform(loop.tick())       # plan the next step (cache lookups are effects too)
        tasks = loop.runnable      # None when the run stops (done, interrupted, drained)
        run the tasks (threads / asyncio); perform(loop.task_done(task)) as each finishes
        perform(loop.after_tick()) # apply writes in task order, one Save for the step
    perform(loop.finish())         # what is left to store (all of it under "exit")
    loop.output()

A step's save ops (its task's writes, then its checkpoint) are handed over together, in
one ``Save``, so a saver stores a step in one transaction; in a step of several tasks,
which finish at different times, each task's writes are handed over as it finishes and the
checkpoint with what is left. Both drivers share every rule here.

``RunLoop`` holds the run's state and its life cycle (set-up, input, end, changes made
outside a step); its methods live in small modules it inherits from: the input phase
(``engine/start.py``), one step (``engine/step.py``: ``tick``, ``task_done``,
``after_tick``) and what code outside the steps may ask (``engine/loop_access.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph._constants import PREVIOUS
from stepgraph.checkpoint.base import next_string_version, string_versions
from stepgraph.constants import (
    INTERRUPT,
    MISSING,
    NS_SEP,
    TASKS,
)
from stepgraph.engine.apply import apply_writes
from stepgraph.engine.effects import NONE, Effect, Effects, Emit, Save
from stepgraph.engine.fresh import read_with_writes
from stepgraph.engine.ids import checkpoint_id as new_checkpoint_id
from stepgraph.engine.loop_access import LoopAccess
from stepgraph.engine.saving import Made, SaveOps
from stepgraph.engine.snapshot import checkpoint_payload
from stepgraph.engine.start import InputPhase
from stepgraph.engine.step import StepPhase
from stepgraph.engine.taskconfig import build_task_config, build_task_runtime
from stepgraph.engine.tracing import RunTracer
from stepgraph.engine.views import StateViews
from stepgraph.stream import events

if TYPE_CHECKING:
    from collections.abc import Iterable

    from stepgraph.config import RunnableConfig
    from stepgraph.engine.tasks import Task
    from stepgraph.engine.timetravel import ReplayBound
    from stepgraph.pregel.main import Pregel
    from stepgraph.runtime import RunControl, Runtime
    from stepgraph.stream.sink import StreamSink

_PAUSED = frozenset({"interrupted", "interrupt_before", "interrupt_after"})

DEFAULT_RECURSION_LIMIT = int(os.environ.get("STEPGRAPH_DEFAULT_RECURSION_LIMIT", "10007"))


def _migrated(ckpt: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint of the v3 layout (queued ``Send``s in ``pending_sends``) in the current
    one (the ``__pregel_tasks`` channel); the saved dict is left as it is."""
    if ckpt.get("v", 4) >= 4 or not ckpt.get("pending_sends"):
        return ckpt
    versions = dict(ckpt.get("channel_versions", {}))
    versions[TASKS] = max(versions.values()) if versions else 1
    values = {**ckpt.get("channel_values", {}), TASKS: list(ckpt["pending_sends"])}
    out = {k: v for k, v in ckpt.items() if k != "pending_sends"}
    return {**out, "channel_values": values, "channel_versions": versions}


def _int_next_version(current: Any, _channel: Any = None) -> int:
    return 1 if current is None else int(current) + 1


def _saver_next_version(checkpointer: Any) -> Any:
    """The saver's ``get_next_version(current, channel)``, called as LangGraph calls it
    (a custom saver may declare ``channel`` without a default)."""
    if getattr(type(checkpointer), "get_next_version", None) is string_versions:
        return next_string_version
    get_next = checkpointer.get_next_version
    return lambda current: get_next(current, None)


class RunLoop(InputPhase, StepPhase, LoopAccess):
    """All state of one run of a graph: channels, versions, the current step and its tasks."""

    def __init__(
        self,
        graph: Pregel,
        input: Any,
        config: RunnableConfig,
        *,
        sink: StreamSink,
        output_keys: str | Sequence[str],
        stream_keys: str | Sequence[str],
        interrupt_before: Sequence[str] | str = (),
        interrupt_after: Sequence[str] | str = (),
        checkpointer: Any = None,
        store: Any = None,
        context: Any = None,
        durability: str = "async",
        runtime: Runtime[Any] | None = None,
        control: RunControl | None = None,
        parent_task: Task | None = None,
        traced: bool = False,
    ) -> None:
        self.graph = graph
        self.nodes = graph.nodes
        self.delta_keys: tuple[str, ...] = graph.delta_keys
        self.input = input
        self.config = config
        self.sink = sink
        self.output_keys = output_keys
        self.stream_keys = stream_keys
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.checkpointer = checkpointer
        self.store = store
        self.context = context
        self.durability = durability
        self.parent_runtime = runtime
        self.control = control
        """The run's ``RunControl`` (drain switch); ``None`` until a node asks for it."""
        self.parent_task = parent_task
        """The parent's task running this graph as a subgraph; ``None`` for a root run."""
        self.tracer: RunTracer | None = RunTracer(self) if traced else None
        """Reports the run to callback handlers; ``None`` for a run without callbacks."""
        self._helpers: dict[str, Any] | None = None
        configurable = config.get("configurable") or {}
        self.configurable = configurable
        self.checkpoint_ns: str = configurable.get("checkpoint_ns", "") or ""
        self.ns: tuple[str, ...] = (
            tuple(self.checkpoint_ns.split(NS_SEP)) if self.checkpoint_ns else ()
        )
        limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        if limit < 1:
            raise ValueError("recursion_limit must be at least 1")
        self.recursion_limit: int = limit
        self.retry_policy = graph.retry_policy
        self.next_version = (
            _int_next_version if checkpointer is None else _saver_next_version(checkpointer)
        )
        self.channels: dict[str, Any] = {}
        self.versions: dict[str, Any] = {}
        self.seen: dict[str, dict[str, Any]] = {}
        self.updated: set[str] | None = None
        self.step = -1
        self.stop = 0
        self.status = "pending"
        self.tasks: dict[str, Task] = {}
        self.runnable: list[Task] | None = None
        """What the last ``tick()`` asks the driver to run; ``None`` when the run stops."""
        self.checkpoint_id = ""
        self.pending_writes: list[tuple[str, str, Any]] = []
        self.saves = SaveOps(self)
        self.views = StateViews()
        """Node inputs refreshed by version (``engine.views``)."""
        self.interrupts: list[Any] = []
        self.resuming = False
        self.resume_map: dict[str, Any] | None = None
        self.null_resume: list[Any] = []
        self.volatile: frozenset[str] = frozenset()
        self.live_volatile: set[str] = set()
        self.max_version: Any = None
        self.trigger_to_nodes: Mapping[str, Any] = graph.trigger_to_nodes
        self.finishable: tuple[str, ...] = ()
        self.output_writes_seen = False
        self.track_output = False
        self.last_output: Any = MISSING
        self.replay: ReplayBound | None = None
        """Set while the root run replays a checkpoint: where subgraphs load from."""
        self.time_travel = False
        """This run replays (or forks) the checkpoint it was given."""
        self.replay_fresh = False
        """A subgraph loaded from before the parent's replay point: its input applies afresh."""

    # -- set-up -----------------------------------------------------------------------------
    def restore(self, saved: Any | None, delta: Mapping[str, Any] | None = None) -> None:
        """Rebuild the channels from a saved checkpoint tuple, or start empty.

        ``delta`` completes the ``DeltaChannel`` keys the checkpoint stores no value for
        (``engine.delta.load_history``): each starts from its history's seed and folds its
        writes.
        """
        specs = self.graph.channels
        if saved is None:
            self.channels = {k: spec.from_checkpoint(MISSING) for k, spec in specs.items()}
            self.step = -1
        else:
            ckpt = _migrated(saved.checkpoint)
            values = ckpt.get("channel_values", {})
            self.channels = {
                k: spec.from_checkpoint(values.get(k, MISSING)) for k, spec in specs.items()
            }
            for key, history in (delta or {}).items():
                channel = specs[key].from_checkpoint(history.get("seed", MISSING))
                channel.replay_writes(history.get("writes") or ())
                self.channels[key] = channel
            self.versions = dict(ckpt.get("channel_versions", {}))
            self.seen = {k: dict(v) for k, v in ckpt.get("versions_seen", {}).items()}
            upd = ckpt.get("updated_channels")
            self.updated = set(upd) if upd is not None else None
            self.checkpoint_id = ckpt["id"]
            self.saves.restored(saved)
            self.step = int(self.saves.metadata.get("step", -2)) + 1
            self.pending_writes = list(saved.pending_writes or ())
        self.stop = self.step + self.recursion_limit + 1
        volatile, self.finishable = self.graph.channel_kinds()
        self.trigger_to_nodes = self.graph.trigger_to_nodes
        self.volatile = vset = self.graph.volatile_set()
        keys = self.output_keys
        # ``invoke`` returns the last output it saw, like LangGraph's last ``values`` chunk:
        # only output channels that clear themselves need remembering.
        self.track_output = keys in vset if isinstance(keys, str) else not vset.isdisjoint(keys)
        self.live_volatile = {c for c in volatile if self.channels[c].is_available()}
        self.max_version = max(self.versions.values()) if self.versions else None

    # -- input ------------------------------------------------------------------------------
    def first(self) -> Effects:
        """Apply the run's input (fresh input, ``None`` to continue, or a ``Command``)."""
        out: list[Effect] = []
        self._start(out)
        ops = self.saves.take()
        if ops:
            out.append(Save(ops))
        return out

    def finish(self) -> Effects:
        """The run ends (also when it fails): what is left to store (under
        ``durability="exit"`` the run's only checkpoint)."""
        ops = self.saves.take(final=True)
        return (Save(ops),) if ops else NONE

    # -- changing the state (the input phase, updates and snapshots call these) -------------
    def checkpoint(self, source: str, step: int, out: list[Effect]) -> None:
        """Make a checkpoint of the current state (queued with the step's save ops) and
        stream it (``checkpoints``/``debug`` modes)."""
        made = self._new_checkpoint(source, step)
        if made is None:
            return
        modes = self.sink.modes
        if "checkpoints" in modes or "debug" in modes:
            ckpt, metadata, parent = made
            payload = checkpoint_payload(self, ckpt, metadata, parent)
            self._emit(out, events.checkpoint_parts(payload, ckpt["ts"]))

    def _new_checkpoint(self, source: str, step: int) -> Made | None:
        """Move to a new checkpoint id and queue its checkpoint (``SaveOps.checkpoint``)."""
        prev_id = self.checkpoint_id or None
        self.checkpoint_id = self.new_checkpoint_id()
        saves = self.saves
        return saves.checkpoint(source, step, prev_id) if saves.needs_checkpoint else None

    def apply(
        self, sources: Iterable[Any], *, volatile: bool = True, mark: bool = False
    ) -> set[str]:
        """Apply writes outside a step (input, null writes, updates, discarded tasks);
        returns the channels updated. ``volatile=False``: a Command's null writes, which
        leave ephemeral channels as they are. ``mark``: they are also the run's last update
        (what ``updated`` holds)."""
        updated = apply_writes(
            self.channels,
            self.versions,
            self.seen,
            sources,
            self.next_version,
            self.graph.trigger_to_nodes,
            self.volatile if volatile else (),
            self.finishable if volatile else (),
            live=self.live_volatile if volatile else None,
            views=self.views,
        )
        if not volatile:
            self.live_volatile.update(c for c in updated if c in self.volatile)
        self.max_version = max(self.versions.values()) if self.versions else None
        if mark:
            self.updated = updated
        return updated

    # -- helpers ----------------------------------------------------------------------------
    def _emit(self, out: list[Effect], parts: events.Parts) -> None:
        if parts:
            out.append(Emit(self.ns, parts))

    def read(self, keys: str | Sequence[str]) -> Any:
        """Current value(s) of ``keys``: one value (``None`` if empty) or a dict."""
        channels = self.channels
        if isinstance(keys, str):
            ch = channels.get(keys)
            return ch.get() if ch is not None and ch.is_available() else None
        out = {}
        for k in keys:
            ch = channels[k]
            if ch.is_available():
                out[k] = ch.get()
        return out

    @property
    def paused(self) -> bool:
        """The run stopped on ``interrupt()`` or at an ``interrupt_before/after`` breakpoint."""
        return self.status in _PAUSED

    def emit(self, mode: str, payload: Any) -> None:
        """Stream a part now: for code running inside a task (task calls, writers), which
        the driver does not sequence (the loop's own parts are ``Emit`` effects)."""
        self.sink.emit(self.ns, mode, payload)

    def emit_custom(self, task: Task, chunk: Any) -> None:
        self.sink.emit(self.ns, "custom", chunk)

    def output(self) -> Any:
        """What ``invoke`` returns: the output keys, plus ``__interrupt__`` when paused."""
        if self.status == "interrupted":
            done = [t for t in self.tasks.values() if not t.paused and t.error is None]
            out = read_with_writes(self, done, self.output_keys)
        elif self.track_output and self.last_output is not MISSING:
            out = self.last_output
        else:
            out = self.read(self.output_keys)
        if self.interrupts:  # a state that is not a dict gives way to the interrupts
            out = (
                {**out, INTERRUPT: list(self.interrupts)}
                if isinstance(out, dict)
                else {INTERRUPT: list(self.interrupts)}
            )
        return out

    # -- per-task context -------------------------------------------------------------------
    def task_config(self, task: Task) -> RunnableConfig:
        return build_task_config(self, task)

    def task_runtime(self, task: Task) -> Runtime[Any]:
        return build_task_runtime(self, task)

    def previous_value(self) -> Any:
        """The saved return value of the previous run (functional API), else ``None``."""
        ch = self.channels.get(PREVIOUS)
        return ch.get() if ch is not None and ch.is_available() else None

    def new_checkpoint_id(self) -> str:
        return new_checkpoint_id(max(self.step, 0))
