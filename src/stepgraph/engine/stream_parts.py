"""Stream parts that read the engine's state: a root run's ``values`` at an interrupt and the
``checkpoints``/``debug`` payload of a new checkpoint. (``stream/events.py`` shapes the
parts that need only a task's own data; it never imports the engine.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.constants import INTERRUPT
from stepgraph.engine.fresh import read_with_writes
from stepgraph.engine.snapshot import checkpoint_payload

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task


def interrupt_values(loop: RunLoop, tasks: list[Task]) -> None:
    """A root run stopping on an interrupt: ``values`` with the finished tasks' writes
    applied on a copy (when they wrote to the output), and, when no task left an interrupt
    (subgraphs paused at breakpoints), an empty ``__interrupt__`` update. Each interrupt
    was streamed when its task stopped (``task_result``)."""
    if loop.parent_task is not None:
        return
    modes = loop.sink.modes
    if "values" in modes:
        done = [t for t in tasks if not t.paused and t.error is None]
        keys = loop.output_keys
        keyset = {keys} if isinstance(keys, str) else set(keys)
        if any(c in keyset for t in done for c, _ in t.writes):
            loop.emit("values", read_with_writes(loop, done, loop.stream_keys))
    if "updates" in modes and not any(t.interrupts for t in tasks):
        loop.emit("updates", {INTERRUPT: ()})


def checkpoint_event(loop: RunLoop, ckpt: dict[str, Any], metadata: dict[str, Any], parent_id: str | None) -> None:
    modes = loop.sink.modes
    if "checkpoints" not in modes and "debug" not in modes:
        return
    payload = checkpoint_payload(loop, ckpt, metadata, parent_id)
    loop.emit("checkpoints", payload)
    loop.emit(
        "debug",
        {"step": metadata.get("step"), "timestamp": ckpt["ts"], "type": "checkpoint", "payload": payload},
    )
