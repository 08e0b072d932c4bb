"""``interrupt()``: pause inside a node, resume with ``Command(resume=...)``."""

from __future__ import annotations

import re
from typing import Any

from stepgraph.engine.context import current_task
from stepgraph.errors import GraphInterrupt

_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def is_resume_map(value: Any) -> bool:
    """A dict whose keys are all interrupt ids resumes several interrupts at once."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(k, str) and _HEX32.match(k) for k in value
    )


def interrupt(value: Any) -> Any:
    """See ``stepgraph.types.interrupt``."""
    from stepgraph.types import Interrupt, interrupt_id_for

    task = current_task()
    if task is None:
        raise RuntimeError("Called interrupt() outside of a running graph node")
    idx = task.interrupt_counter
    task.interrupt_counter += 1
    if idx < len(task.resume):
        return task.resume[idx]
    loop = task.run
    if loop.checkpointer is None:
        from stepgraph.errors import StepgraphError

        raise StepgraphError(
            f"Node '{task.name}' called interrupt() but the graph has no checkpointer, so the "
            "run could never be resumed.",
            code="SG320",
            hint="compile(checkpointer=InMemorySaver()) (or SqliteSaver) and pass a thread_id",
        )
    iid = interrupt_id_for(task.ns if idx == 0 else f"{task.ns}#{idx}")
    if loop.resume_map is not None and iid in loop.resume_map:
        resumed = loop.resume_map[iid]
        task.resume.append(resumed)
        return resumed
    if loop.null_resume:
        resumed = loop.null_resume.pop()
        task.resume.append(resumed)
        return resumed
    raise GraphInterrupt((Interrupt(value=value, id=iid),))
