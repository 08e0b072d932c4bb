"""The input phase of a run: fresh input, ``None`` to continue, or a ``Command``.

``InputPhase._start`` is what ``RunLoop.first()`` does (``RunLoop`` inherits these
methods): map the input to writes, decide whether the run resumes (and with which resume
values), fork a replayed checkpoint, and make the input checkpoint. Like the rest of the
loop it does no I/O: it changes the state through the loop's own ``apply``/``checkpoint``
and adds the effects it wants to ``out``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.constants import INPUT, INTERRUPT, MISSING, NULL_TASK_ID, RESUME, RETURN, START
from stepgraph.engine import planner
from stepgraph.engine.apply import WriteSource
from stepgraph.engine.effects import Effect, Emit
from stepgraph.engine.input import map_command, map_input
from stepgraph.engine.interrupts import is_resume_map
from stepgraph.engine.timetravel import ReplayBound
from stepgraph.errors import EmptyInputError, InvalidUpdateError
from stepgraph.types import Command

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop


class InputPhase:
    """The input phase as methods of ``RunLoop`` (kept here so ``loop.py`` stays small):
    ``RunLoop.first()`` calls ``_start``, which changes the run state through the loop's
    own ``apply``/``checkpoint`` and adds the effects it wants to ``out``."""

    __slots__ = ()

    def where_to_start(self: RunLoop) -> tuple[dict[str, Any], str | None]:
        """``(config, before)``: the driver loads ``config``'s checkpoint, or with ``before``
        the latest checkpoint of its namespace older than that id (a subgraph of a replaying
        root). Marks the run accordingly."""
        config = self.config
        parent = self.parent_task
        if parent is None:
            return config, None
        self.replay = bound = parent.run.replay
        ns = self.checkpoint_ns
        target = (self.configurable.get("checkpoint_map") or {}).get(ns)
        if target:
            self.time_travel = True
            configurable = {**self.configurable, "checkpoint_id": target}
            return {**config, "configurable": configurable}, None
        if bound is not None and bound.first_visit(ns):
            self.replay_fresh = True
            return config, bound.checkpoint_id
        return config, None

    def _start(self: RunLoop, out: list[Effect]) -> None:
        """Apply the run's input (fresh input, ``None`` to continue, or a ``Command``)."""
        inp = self.input
        parent = self.parent_task
        if parent is None:
            self.time_travel = inp is None and "checkpoint_id" in self.configurable
        else:
            # A subgraph shares its parent's resume values; when the parent re-runs this
            # node to resume it, the child continues from its own checkpoint (or replays the
            # one the config names). Loaded from before the parent's replay point, it starts
            # afresh with its input.
            self.null_resume = parent.run.null_resume
            self.resume_map = parent.run.resume_map
            if (
                parent.run.resuming
                and self.versions
                and not self.replay_fresh
                and not isinstance(inp, Command)
                and (self.time_travel or self._stopped_midway())
            ):
                inp = None
            elif inp is not None:
                self.time_travel = False
        if (
            isinstance(inp, Command)
            and not self.versions
            and self.graph.input_channels == START
            and inp.resume is None
            and inp.graph is None
        ):
            # A Command starting a new thread acts as its input: the start node applies its
            # update and goto, and START's own edges fire as for any input.
            self._fresh_input([(START, inp)], out)
            return
        if isinstance(inp, Command):
            writes, resume = map_command(self, inp)
            if resume is not MISSING:
                self.saves.require_checkpointer("Command(resume=...)")
                self._check_resumable(resume)
                self._set_resume(resume)
            if parent is None and "checkpoint_id" in self.configurable:
                self._rerun_finished()
            if writes:
                self._apply_null_writes(writes)
            else:
                self._apply_saved_null_writes()
            self.resuming = True
            self.seen[INTERRUPT] = dict(self.versions)  # go on past a breakpoint
            self._emit_resume_values(out)
            return
        if inp is None:
            if not self.versions:
                raise EmptyInputError(
                    "Received no input for __start__.",
                    code="SG301",
                    hint="pass the graph's input, or a thread_id whose run can continue",
                )
            self.resuming = True
            self.seen[INTERRUPT] = dict(self.versions)
            self._apply_saved_null_writes()
            if self.time_travel:
                self._replay(out)
            self._emit_resume_values(out)
            return
        writes = map_input(self.graph, inp)
        if not writes:
            raise EmptyInputError(
                f"Received no input for {self.graph.input_channels!r}.",
                code="SG301",
                hint="give the graph an input with at least one of its input keys",
            )
        self._fresh_input(writes, out)


    def _stopped_midway(self: RunLoop) -> bool:
        """A subgraph's checkpoint where it paused (``interrupt()``, a breakpoint), crashed,
        failed in a node or was drained: tasks remain, so a resuming parent continues it (a
        finished one takes new input)."""
        if any(c == INTERRUPT for _, c, _ in self.pending_writes):
            return True
        return bool(planner.plan_tasks(self, for_execution=False))


    def _fresh_input(self: RunLoop, writes: list[tuple[str, Any]], out: list[Effect]) -> None:
        # New input discards tasks still pending from the previous checkpoint; their saved
        # writes are never applied, so delta keys cannot be rebuilt across them.
        delta_keys = self.delta_keys
        if delta_keys and any(c in delta_keys for _, c, _ in self.pending_writes):
            self.saves.whole_delta = True
        discarded = [
            WriteSource(t.name, [], t.triggers, t.path, t.sort_key)
            for t in planner.plan_tasks(self, for_execution=False).values()
        ]
        self.pending_writes = []
        self.updated = self.apply([*discarded, WriteSource(INPUT, writes)])
        self.checkpoint("input", self.step, out)
        self.step += 1


    def _replay(self: RunLoop, out: list[Effect]) -> None:
        """Run again from a past checkpoint: save a fork of it and re-execute its tasks.

        Writes saved for its tasks (results, interrupts, resume values) are not reused, so
        every task runs again and its interrupts fire again. Checkpoints made by
        ``update_state`` (or forks) are already branches: they run as is. A root run's
        subgraphs then load their state as of the replayed point (``ReplayBound``).
        """
        self.pending_writes = []
        bound = self.checkpoint_id
        if self.checkpoint_metadata.get("source") in ("update", "fork"):
            bound = self.saves.parent_id or bound
        else:
            self.checkpoint("fork", self.step, out)
            self.step += 1
        if self.parent_task is None:
            self.replay = ReplayBound(bound)


    def _rerun_finished(self: RunLoop) -> None:
        """A ``Command`` at a past checkpoint named by id runs that step's tasks again: results
        saved for them on that checkpoint are not reused (their interrupts and resume values are)."""
        keep = (RESUME, INTERRUPT)
        self.pending_writes = [w for w in self.pending_writes if w[0] == NULL_TASK_ID or w[1] in keep]


    def _apply_null_writes(self: RunLoop, writes: list[tuple[str, Any]]) -> None:
        """Apply a Command input's writes now, after those an earlier Command saved on this
        checkpoint; all are saved as pending writes until the next step (the earlier ones
        first, at the indexes they already have)."""
        prior = self._apply_saved_null_writes()
        self.saves.task_writes(NULL_TASK_ID, [*prior, *writes], "")
        updated = self.apply([WriteSource(INPUT, writes)], volatile=False)
        self.updated = updated if self.updated is None else self.updated | updated


    def _apply_saved_null_writes(self: RunLoop) -> list[tuple[str, Any]]:
        """Apply the null writes saved on the checkpoint (a Command's update or goto); returns them."""
        null = [(c, v) for t, c, v in self.pending_writes if t == NULL_TASK_ID]
        if null:
            self.pending_writes = [w for w in self.pending_writes if w[0] != NULL_TASK_ID]
            updated = self.apply([WriteSource(INPUT, null)], volatile=False)
            self.updated = updated if self.updated is None else self.updated | updated
        return null


    def _check_resumable(self: RunLoop, resume: Any) -> None:
        """A resume value needs something to resume: an interrupt, or tasks the thread stopped
        before (a breakpoint). One value for several waiting interrupts is ambiguous."""
        hanging = self._hanging_interrupts()
        if not hanging and not any(c == INTERRUPT for _, c, _ in self.pending_writes) and (
            not planner.plan_tasks(self, for_execution=False)
        ):
            raise InvalidUpdateError(
                "Command(resume=...) was given but the thread has no pending interrupt.",
                code="SG321",
                hint="resume only a thread whose last run stopped at interrupt() or a breakpoint; "
                "check graph.get_state(config).interrupts",
            )
        if len(hanging) > 1 and not is_resume_map(resume):
            raise RuntimeError(
                "When there are multiple pending interrupts, you must specify the interrupt id "
                "when resuming. Pass Command(resume={interrupt_id: value, ...})."
            )


    def _hanging_interrupts(self: RunLoop) -> set[Any]:
        """The ids of the interrupts still waiting: a task's latest interrupt, unless the task
        already has a resume value or finished (a ``@task`` resumed earlier saved its return)."""
        by_task: dict[str, Any] = {}
        resumed: set[str] = set()
        for tid, chan, value in self.pending_writes:
            if chan == INTERRUPT:
                items = value if isinstance(value, (list, tuple)) else [value]
                if items:
                    by_task[tid] = getattr(items[0], "id", None) or tid
            elif chan == RESUME or chan == RETURN:
                resumed.add(tid)
        return {iid for tid, iid in by_task.items() if tid not in resumed}


    def _set_resume(self: RunLoop, resume: Any) -> None:
        if is_resume_map(resume):
            self.resume_map = dict(resume)
        else:
            self.null_resume = [resume]


    def _emit_resume_values(self: RunLoop, out: list[Effect]) -> None:
        if "values" in self.sink.modes and self.versions:
            out.append(Emit(self.ns, [("values", self.read(self.stream_keys))]))
