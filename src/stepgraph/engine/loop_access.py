"""``RunLoop``'s methods for code outside the run's steps (kept here so ``loop.py`` stays
small; ``RunLoop`` inherits them, like the input phase of ``engine/start.py``).

The run state is private to the loop: ``update_state`` (``engine/update.py``),
``get_state`` (``engine/snapshot.py``), a node's ``Runtime`` (``engine/taskconfig.py``) and
the ``events`` stream (``stream/events_v2.py``) read a loop's fields and change it only
through these methods (``tests/unit/core/test_run_state.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.engine import planner
from stepgraph.runtime import RunControl

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.saving import Op
    from stepgraph.engine.tasks import Task


class LoopAccess:
    """What code outside a run's steps may ask of its loop."""

    __slots__ = ()

    def update_checkpoint(self: RunLoop, source: str, step: int) -> list[Op]:
        """``update_state``: checkpoint the state as the update left it (stored even when the
        run that made the loop has no checkpointer); the saver calls to perform."""
        self.saves.force()
        self._new_checkpoint(source, step)
        return self.saves.take()

    def plan_next(self: RunLoop) -> dict[str, Task]:
        """The tasks the next step would run, planned without running them (the loop
        stays at its step)."""
        step = self.step
        try:
            self.step = step + 1
            return planner.plan_tasks(self, for_execution=False)
        finally:
            self.step = step

    def run_control(self: RunLoop) -> RunControl:
        """The run's ``RunControl``, made on first use (a drain request then stops the
        run at the next step)."""
        control = self.control
        if control is None:
            control = self.control = RunControl()
        return control

    def helper(self: RunLoop, kind: str, make: Callable[[RunLoop], Any]) -> Any:
        """A per-run helper of another layer (the ``events`` stream's callback handler),
        made by ``make(loop)`` on first use and kept for the rest of the run."""
        helpers = self._helpers
        if helpers is None:
            helpers = self._helpers = {}
        found = helpers.get(kind)
        if found is None:
            found = helpers[kind] = make(self)
        return found

    @property
    def checkpoint_ts(self: RunLoop) -> str:
        """The time of the checkpoint the loop is at (``SaveOps.ts``)."""
        return self.saves.ts

    @property
    def checkpoint_metadata(self: RunLoop) -> dict[str, Any]:
        """The metadata of the checkpoint the loop is at (``SaveOps.metadata``)."""
        return self.saves.metadata
