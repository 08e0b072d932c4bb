"""After a restart: what becomes of the runs the previous process left unfinished.

A process that stops cleanly cancels its runs (``interrupted``) and leaves queued ones
``pending``. A process that was killed (SIGKILL, OOM, power) leaves runs ``running`` that no
worker executes any more. At start-up each of them is, in order:

- **failed** with ``worker lost: server restarted`` when its graph is no longer served, or
  when it already had ``max_attempts`` executions: the run's ``error``, the thread's
  ``error`` (status ``error``) and what ``join`` / ``stream`` answer say so;
- **resumed** when it committed checkpoints (the thread's latest checkpoint was written by
  the run): it is queued again and continues from its last checkpoint with no input (its
  input is never applied twice), as attempt ``n + 1``;
- **re-run** from its input when it committed nothing (the input never reached storage, so
  running it again applies it once).

``pending`` runs are queued again as they were (a delayed run keeps its time). Nodes run
at least once: a step cut by the crash runs again; committed steps never do.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepgraph.server.context import ServerContext

__all__ = ["WORKER_LOST", "lost_error", "recover_runs"]

logger = logging.getLogger("stepgraph.server")

WORKER_LOST = "worker lost: server restarted"
"""The start of the message of a run that the restart could not resume."""


def lost_error(detail: str) -> dict[str, str]:
    """The ``error`` payload of a run lost in a restart."""
    return {"error": "WorkerLostError", "message": f"{WORKER_LOST} ({detail})"}


async def _committed(ctx: ServerContext, run: dict[str, Any]) -> bool:
    """Whether the thread's latest root checkpoint was written by ``run``."""
    config = {"configurable": {"thread_id": run["thread_id"], "checkpoint_ns": ""}}
    latest = await ctx.backend.saver.aget_tuple(config)
    return latest is not None and (latest.metadata or {}).get("run_id") == run["run_id"]


def _next_attempt(run: dict[str, Any], resume: bool) -> dict[str, Any]:
    """The fields that queue ``run`` again as its next attempt."""
    attempt = int(run.get("_attempt") or 1) + 1
    kwargs = copy.deepcopy(run.get("kwargs") or {})
    metadata = (kwargs.get("config") or {}).get("metadata")
    if isinstance(metadata, dict):
        metadata["run_attempt"] = attempt
    return {"_attempt": attempt, "_resume": bool(run.get("_resume")) or resume, "kwargs": kwargs}


async def recover_runs(ctx: ServerContext, max_attempts: int) -> list[dict[str, Any]]:
    """Settle the runs a previous process left; the runs to queue again, in order."""
    again: list[dict[str, Any]] = []
    failed: dict[str, dict[str, str]] = {}
    for run in await ctx.runs.all():
        status = run.get("status")
        if status not in ("running", "pending"):
            continue
        graph_id = (run.get("metadata") or {}).get("graph_id")
        error: dict[str, str] | None = None
        if graph_id not in ctx.registry:
            error = lost_error(f"graph {graph_id!r} is not served any more")
        elif status == "running":
            attempt = int(run.get("_attempt") or 1)
            if attempt >= max_attempts:
                error = lost_error(f"the run was executing; attempt {attempt} of {max_attempts}, giving up")
            else:
                try:
                    resume = await _committed(ctx, run)
                except Exception:  # noqa: BLE001 - an unreadable thread: re-running would be a guess
                    logger.exception("reading the checkpoints of thread %s failed", run["thread_id"])
                    error = lost_error("its checkpoints could not be read")
                else:
                    fields = _next_attempt(run, resume)
                    run = await ctx.runs.set_status(run["run_id"], "pending", **fields) or {**run, **fields}
                    logger.warning("run %s was cut by a restart: %s as attempt %d", run["run_id"],
                                   "resumed from its last checkpoint" if run["_resume"] else "re-run from its input",
                                   run["_attempt"])
        if error is not None:
            await ctx.runs.set_status(run["run_id"], "error", error=error)
            failed[run["thread_id"]] = error
            logger.warning("run %s failed: %s", run["run_id"], error["message"])
            continue
        again.append(run)
    again.sort(key=lambda r: (not r.get("_resume"), float(r.get("_not_before") or 0.0), r.get("created_at") or ""))
    queued = {r["thread_id"] for r in again}
    for thread in await ctx.threads.all():
        tid = thread["thread_id"]
        if tid in queued:
            await ctx.refresh_thread(tid, status="busy")
        elif tid in failed:
            await ctx.refresh_thread(tid, status="error", error=failed[tid])
        elif thread.get("status") == "busy":
            await ctx.refresh_thread(tid)
    return again
