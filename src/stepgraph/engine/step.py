"""One superstep of a run: plan it, record its finished tasks, apply its writes.

``StepPhase`` holds ``RunLoop``'s per-step methods (``RunLoop`` inherits them, like the
input phase of ``engine/start.py``): ``tick()`` plans the step and says what to run,
``task_done(task)`` records each finished task, ``after_tick()`` applies the step's writes
and makes its checkpoint. Like the rest of the loop they do no I/O: each returns the
effects it wants performed (``engine/effects.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph.constants import ERROR, INTERRUPT, MISSING, NO_WRITES, RESUME
from stepgraph.engine import caching, planner
from stepgraph.engine.apply import apply_writes
from stepgraph.engine.delta import stamp_message_ids
from stepgraph.engine.effects import NONE, CacheGet, CacheSet, Effect, Effects, Emit, Save
from stepgraph.engine.fresh import read_with_writes
from stepgraph.errors import ErrorCode, GraphRecursionError, create_error_message
from stepgraph.stream import events

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.saving import SaveOps
    from stepgraph.engine.tasks import Task


class StepPhase:
    """The steps of a run as methods of ``RunLoop`` (kept here so ``loop.py`` stays small):
    ``tick()``, ``task_done()`` and ``after_tick()``, with their helpers."""

    __slots__ = ()

    def tick(self: RunLoop) -> Effects:
        """Plan the next superstep; ``runnable`` then holds the tasks to run (``None`` when
        the run stops)."""
        self.runnable = None
        if self.step > self.stop:
            self.status = "out_of_steps"
            raise GraphRecursionError(
                create_error_message(
                    message=f"Recursion limit of {self.recursion_limit} reached without "
                    "hitting a stop condition. You can increase the limit by setting the "
                    f"`recursion_limit` config key. (stepgraph: stopped before step "
                    f"{self.step}.)",
                    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
                ),
                code="SG302",
            )
        # Without a checkpointer, or one that stores only the last checkpoint, no task is
        # looked up by id: ids are made only if read.
        saves = self.saves
        self.tasks = planner.plan_tasks(
            self,
            for_execution=True,
            by_id=bool(self.pending_writes) or (saves.enabled and not saves.exit_only),
        )
        if not self.tasks:
            self.status = "done"
            return NONE
        out: list[Effect] | None = None
        if self.pending_writes:
            planner.attach_pending_writes(self)
            parts = events.restored_results(self, self.tasks.values())
            if parts:
                out = [Emit(self.ns, parts)]
        cache = self.graph.cache
        if cache is not None:
            todo = caching.lookups(self, list(self.tasks.values()))
            if todo:

                def then(found: Mapping[Any, Any]) -> Effects:
                    more: list[Effect] = []
                    for task in caching.apply_hits(todo, found):
                        more.extend(self.task_done(task))
                    more.extend(self._ready())
                    return more

                return [*(out or ()), CacheGet(cache, [k for _, k in todo], then)]
        ready = self._ready()
        if out is None:
            return ready
        out.extend(ready)
        return out

    def _ready(self: RunLoop) -> Effects:
        """The rest of ``tick()`` once cached results are known: breakpoints, a drain, the
        ``tasks`` stream, and what to run."""
        if self.interrupt_before and self._should_interrupt(self.interrupt_before):
            self.status = "interrupt_before"
            return self._breakpoint()
        control = self.control
        if control is not None and control.drain_requested:
            # After the breakpoint check: a resume passes this step's breakpoints, so a
            # drain in front of one must not skip it.
            self.status = "draining"
            return NONE
        tasks = self.tasks.values()
        out: Effects = NONE
        modes = self.sink.modes
        if "tasks" in modes or "debug" in modes:
            parts = [
                part
                for task in tasks
                if not task.node.hidden and not task.cached
                for part in events.task_start(self, task)
            ]
            if parts:
                out = [Emit(self.ns, parts)]
        self.runnable = [t for t in tasks if not t.writes and not t.cached_done]
        return out

    def task_done(self: RunLoop, task: Task) -> Effects:
        """Record a finished task: queue its writes for the step's ``Save`` (in a step of
        several tasks, hand them over at once) and stream its update."""
        if task.bubbled:
            return NONE
        if self.delta_keys and task.writes:
            self._stamp_delta_writes(task)
        saves = self.saves
        failed = task.error is not None and bool(task.writes) and task.writes[0][0] == ERROR
        if saves.enabled:  # (without a saver ``task_writes`` keeps nothing: not called)
            _keep_writes(saves, task, failed)
        out: Effects = NONE
        if (
            not failed
            and not task.paused
            and task.node.cache_policy is not None
            and not task.cached
        ):
            entries = caching.result_entry(self, task)
            if entries is not None:
                out = [CacheSet(self.graph.cache, entries)]
        if not task.node.hidden and self.sink.modes:  # (no modes: it has no parts)
            parts = events.task_result(self, task)
            if parts:
                out = [*out, Emit(self.ns, parts)]
        runnable = self.runnable
        if runnable is not None and len(runnable) > 1:
            # Tasks of a parallel step finish at different times: each one's writes go at
            # once, so a crash while its siblings still run does not lose them.
            ops = saves.take()
            if ops:
                out = [*out, Save(ops)]
        return out

    def after_tick(self: RunLoop) -> Effects:
        """Apply the step's writes, emit ``values``, checkpoint, and check interrupts; the
        step's save ops are returned together (one ``Save``)."""
        tasks = list(self.tasks.values())
        held = paused = False
        for t in tasks:
            if t.held_for_handler:
                held = True
            if t.paused:
                paused = True
        if held:
            # A node failed and the run pauses before its error handler: nothing is
            # applied, the step's writes (and the node's error) stay pending.
            self.status = "interrupt_before"
            return self._breakpoint()
        if paused:
            interrupted = [t for t in tasks if t.paused]
            self.status = "interrupted"
            self.interrupts = [i for t in interrupted for i in t.interrupts]
            if self.parent_task is None:
                parts = events.interrupt_parts(self.sink.modes, self._values_after(tasks), tasks)
                if parts:
                    return [Emit(self.ns, parts)]
            return NONE
        new_version = self.next_version(self.max_version)
        self.updated = apply_writes(
            self.channels,
            self.versions,
            self.seen,
            tasks,
            self.next_version,
            self.trigger_to_nodes,
            self.volatile,
            self.finishable,
            self.step,
            new_version=new_version,
            live=self.live_volatile,
            touched=self.saves.touched,
            views=self.views,
        )
        self.max_version = new_version
        self.pending_writes = []
        if self.track_output and self._changed(self.output_keys):
            self.last_output = self.read(self.output_keys)
        out: list[Effect] = []
        if "values" in self.sink.modes and self._changed(self.stream_keys):
            out.append(Emit(self.ns, [("values", self.read(self.stream_keys))]))
        self.checkpoint("loop", self.step, out)
        self.step += 1
        if self.interrupt_after and self._should_interrupt(self.interrupt_after, tasks):
            self.status = "interrupt_after"
            out.extend(self._breakpoint())
        ops = self.saves.take()
        if ops:
            out.append(Save(ops))
        return out

    def _values_after(self: RunLoop, tasks: list[Task]) -> Any:
        """The stream state with the finished tasks' writes applied on a copy, when they
        wrote to the output (else ``MISSING``): what a root streams when it pauses."""
        if "values" not in self.sink.modes:
            return MISSING
        done = [t for t in tasks if not t.paused and t.error is None]
        keys = self.output_keys
        keyset = {keys} if isinstance(keys, str) else set(keys)
        if not any(c in keyset for t in done for c, _ in t.writes):
            return MISSING
        return read_with_writes(self, done, self.stream_keys)

    def _breakpoint(self: RunLoop) -> Effects:
        """A breakpoint stops the run: the root streams an empty ``__interrupt__`` update (a
        subgraph's pause reaches the caller through its parent)."""
        if self.parent_task is None and "updates" in self.sink.modes:
            return [Emit(self.ns, [("updates", {INTERRUPT: ()})])]
        return NONE

    def _stamp_delta_writes(self: RunLoop, task: Task) -> None:
        """Give messages written to delta keys their ids before the writes are stored."""
        keys = self.delta_keys
        task.writes[:] = [
            (c, stamp_message_ids(v)) if c in keys else (c, v) for c, v in task.writes
        ]

    def _changed(self: RunLoop, keys: str | Sequence[str]) -> bool:
        updated = self.updated or ()
        if isinstance(keys, str):
            return keys in updated
        return (
            any(k in updated for k in keys)
            if len(updated) < len(keys)
            else any(k in keys for k in updated)
        )

    def _should_interrupt(
        self: RunLoop, names: Sequence[str] | str, tasks: Sequence[Task] | None = None
    ) -> bool:
        if not names:
            return False
        seen = self.seen.get(INTERRUPT, {})
        if not any(v != seen.get(k) for k, v in self.versions.items()):
            return False
        pool = tasks if tasks is not None else self.tasks.values()
        hit = any(not t.node.hidden and (names == "*" or t.name in names) for t in pool)
        if hit:
            self.seen[INTERRUPT] = dict(self.versions)
        return hit


def _keep_writes(saves: SaveOps, task: Task, failed: bool) -> None:
    """Queue what a finished task stores: its error, its interrupt (and resume values), or
    its writes (``NO_WRITES`` for none) and resume values."""
    if failed:
        saves.task_writes(task, task.writes, task.sort_key)
        return
    if task.paused:
        saves.task_writes(task, [(INTERRUPT, task.interrupts)], task.sort_key)
    else:
        saves.task_writes(task, task.writes or [(NO_WRITES, None)], task.sort_key)
    if task.resume:
        saves.task_writes(task, [(RESUME, list(task.resume))], task.sort_key)
